package rules

import (
	"strings"
	"testing"
	"time"

	"redline/internal/doctor"
	"redline/internal/testutil"
)

// The netdev post behind azure-mana-4cpu (see its SOURCE) shows two
// readings of /proc/interrupts between which "Interrupt affinity for
// mana_q2 changes": queue 2 moved from CPU 3 to CPU 0. The tree holds the
// second reading byte for byte, where IRQ 27 (mana_q2) has 157181
// interrupts on CPU 0 and 3007990 on CPU 3. The first reading is modelled
// from it with one change, the one the post describes: before the move
// queue 2 had taken nothing on CPU 0. The tree has no /proc/irq, so the
// rule judges the counts alone.
func TestIRQMovingOnManaReadings(t *testing.T) {
	src := "../../../testdata/hosts/azure-mana-4cpu"
	before := testutil.CopyTree(t, src)
	editInterrupts(t, before, func(irq int, counts []uint64) bool {
		if irq == 27 {
			counts[0] = 0
		}
		return true
	})
	f := treeFacts(t, src)
	f.Prev, f.Interval = treeFacts(t, before).Host, 15*time.Second
	fd := runOne(t, f, "irq-affinity-moving")
	if fd.Status != doctor.Fired || !strings.HasPrefix(fd.Message, "1 of 4 queue IRQs changed CPUs within 15s") {
		t.Fatalf("%s %s%s", fd.Status, fd.Message, fd.Reason)
	}
	ev := fd.Evidence[0]
	if ev.Source != "/proc/interrupts IRQ 27 (enP30832s1 queue 2)" || ev.Value != "CPU0 100%" ||
		!strings.Contains(ev.Note, "157181 interrupts in the last 15s, mostly on CPU 0") || !strings.Contains(ev.Note, "moved from CPU 3 to CPU 0") {
		t.Errorf("evidence: %+v", ev)
	}
	// The same reading twice: nothing moved.
	f.Prev = treeFacts(t, src).Host
	if fd := runOne(t, f, "irq-affinity-moving"); fd.Status != doctor.OK {
		t.Errorf("no change: %s %s%s", fd.Status, fd.Message, fd.Reason)
	}
}
