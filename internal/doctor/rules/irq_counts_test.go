package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"redline/internal/doctor"
	"redline/internal/host"
	"redline/internal/testutil"
)

// editInterrupts rewrites dir's /proc/interrupts: edit gets each IRQ line's
// number and per-CPU counts and may change the counts or drop the line.
func editInterrupts(t *testing.T, dir string, edit func(irq int, counts []uint64) bool) {
	t.Helper()
	path := filepath.Join(dir, "proc/interrupts")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	ncpu := len(strings.Fields(lines[0]))
	var out []string
	for _, line := range lines {
		f := strings.Fields(line)
		irq, err := strconv.Atoi(strings.TrimSuffix(firstOr(f, ""), ":"))
		if err != nil || len(f) < ncpu+1 {
			out = append(out, line)
			continue
		}
		counts := make([]uint64, ncpu)
		for c := range counts {
			counts[c], _ = strconv.ParseUint(f[1+c], 10, 64)
		}
		if !edit(irq, counts) {
			continue
		}
		var nb strings.Builder
		fmt.Fprintf(&nb, "%4d:", irq)
		for _, c := range counts {
			fmt.Fprintf(&nb, " %10d", c)
		}
		nb.WriteString("  " + strings.Join(f[1+ncpu:], " "))
		out = append(out, nb.String())
	}
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

func firstOr(f []string, d string) string {
	if len(f) == 0 {
		return d
	}
	return f[0]
}

// With --sample the IRQ count rules judge the window's rise only: since
// boot netutils-igb-ixgbe-2socket's eth0 delivered every queue interrupt to
// CPU 0 (3 billion on IRQ 98 alone); in the window queues 0-5 rose by
// 1,000 each, each on a CPU of its own. IRQ 99 is absent from the first
// sample: it has no rate and is named as left out, never added as a total.
func TestIRQCountsJudgeRatesOrTotalsNeverBoth(t *testing.T) {
	src := "../../../testdata/hosts/netutils-igb-ixgbe-2socket"
	before, after := testutil.CopyTree(t, src), testutil.CopyTree(t, src)
	editInterrupts(t, before, func(irq int, _ []uint64) bool { return irq != 99 })
	editInterrupts(t, after, func(irq int, counts []uint64) bool {
		if irq >= 92 && irq <= 97 {
			counts[2*(irq-92)+2] += 1000
		}
		if irq == 99 {
			counts[5] += 1000
		}
		return true
	})
	f := treeFacts(t, after)
	f.Prev, f.Interval = treeFacts(t, before).Host, 5*time.Second
	f.Iface = "eth0"
	fd := runOne(t, f, "nic-irq-concentration")
	if fd.Status != doctor.OK {
		t.Fatalf("sampled: %s %s%s", fd.Status, fd.Message, fd.Reason)
	}
	var by, left *doctor.Evidence
	for i, e := range fd.Evidence {
		switch e.Source {
		case "/proc/interrupts eth0 queue IRQs by CPU":
			by = &fd.Evidence[i]
		case "/proc/interrupts eth0 queue IRQs without a rate":
			left = &fd.Evidence[i]
		}
	}
	if by == nil || by.Note != "6000 interrupts in the last 5s" {
		t.Errorf("sampled figure: %+v", by)
	}
	if left == nil || !strings.Contains(left.Value, "IRQ 99 is not in the first sample") {
		t.Errorf("left-out IRQ not named: %+v", fd.Evidence)
	}
	// One sample: totals since boot, all on CPU 0, and said so.
	f.Prev = nil
	fd = runOne(t, f, "nic-irq-concentration")
	if fd.Status != doctor.Fired || !strings.Contains(fd.Evidence[0].Note, "since boot") || strings.Contains(fd.Evidence[0].Note, "last 5s") {
		t.Errorf("since boot: %s %s %+v", fd.Status, fd.Message, fd.Evidence[0])
	}
	// Every queue IRQ without a rate: not checked, saying why.
	f.Prev = treeFacts(t, before).Host
	f.Prev.Interrupts.IRQs = nil
	if fd := runOne(t, f, "nic-irq-sharing"); fd.Status != doctor.NotChecked || !strings.Contains(fd.Reason, "no queue IRQ of eth0 has a rate") {
		t.Errorf("no rate at all: %s %s%s", fd.Status, fd.Message, fd.Reason)
	}
}

// NET_RX shares with --sample are rates only: a CPU the first sample has
// no column for is left out, not counted by its total.
func TestNetRxShareIsARateOrNothing(t *testing.T) {
	f := healthyFacts()
	withSample(f)
	f.Prev.Softirqs = &host.Softirqs{CPUs: []int{0, 1, 2, 3, 4, 5, 6}, Counts: map[string][]uint64{"NET_RX": {10, 10, 10, 10, 900, 1000, 10}}}
	f.Host.Softirqs.Counts["NET_RX"][7] = 1000000 // since boot, CPU 7 only in the second sample
	per, total := netRxShare(f)
	if _, ok := per[7]; ok || total != 100 || per[4] != 100 {
		t.Errorf("per CPU %v, total %d; want CPU 7 left out and 100 on CPU 4", per, total)
	}
}
