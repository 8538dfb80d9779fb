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
// second reading byte for byte. The first reading's lines of IRQs 25-27
// are the post's own (also in internal/host's held-out captures); mana_q3's
// line (IRQ 28) was wrapped in the mail, so it keeps the second reading's
// counts: modelled as no interrupts between the readings, which leaves it
// out of the window's figures. The tree has no /proc/irq, so the rule
// judges the counts alone.
// manaFirstReading is the post's first reading of mana_q0..q2.
var manaFirstReading = map[int][]uint64{
	25: {1, 103, 0, 2989138},
	26: {0, 1, 4005360, 0},
	27: {0, 0, 1, 2997584},
}

func TestIRQMovingOnManaReadings(t *testing.T) {
	src := "../../../testdata/hosts/azure-mana-4cpu"
	before := testutil.CopyTree(t, src)
	editInterrupts(t, before, func(irq int, counts []uint64) bool {
		if c, ok := manaFirstReading[irq]; ok {
			copy(counts, c)
		}
		return true
	})
	f := treeFacts(t, src)
	f.Prev, f.Interval = treeFacts(t, before).Host, 15*time.Second
	fd := runOne(t, f, "irq-affinity-moving")
	if fd.Status != doctor.Fired || !strings.HasPrefix(fd.Message, "1 of 4 queue IRQs changed CPUs within 15s") {
		t.Fatalf("%s %s%s", fd.Status, fd.Message, fd.Reason)
	}
	if !strings.Contains(fd.Message, "no process list to tell") { // the capture has no /proc/PID
		t.Errorf("who moves them: %s", fd.Message)
	}
	ev := fd.Evidence[0]
	if ev.Source != "/proc/interrupts IRQ 27 (enP30832s1 queue 2)" || ev.Value != "CPU0 94%, CPU3 6%, 1 more, under 1% each" ||
		!strings.Contains(ev.Note, "167597 interrupts in the last 15s, mostly on CPU 0") || !strings.Contains(ev.Note, "moved from CPU 3 to CPU 0") {
		t.Errorf("evidence: %+v", ev)
	}
	// The same reading twice: nothing moved.
	f.Prev = treeFacts(t, src).Host
	if fd := runOne(t, f, "irq-affinity-moving"); fd.Status != doctor.OK {
		t.Errorf("no change: %s %s%s", fd.Status, fd.Message, fd.Reason)
	}
}
