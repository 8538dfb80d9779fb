package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/doctor"
	"redline/internal/testutil"
)

// Each fixture tree's own /proc/interrupts, alone in a tree (no
// /sys/class/net, no CPU topology): the count rules judge the NICs
// inferred from the IRQ names as they judge the tree's own NICs, and say
// the NICs are inferred; the rules that need the topology say why they
// could not check.
func TestIRQCountRulesOnInterruptsOnlyTrees(t *testing.T) {
	trees, _ := filepath.Glob("../../../testdata/hosts/*")
	for _, dir := range trees {
		data, err := os.ReadFile(filepath.Join(dir, "proc/interrupts"))
		if err != nil {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			full := treeFacts(t, dir)
			only := treeFacts(t, testutil.WriteTree(t, map[string]string{"proc/interrupts": string(data), "sys/.keep": ""}))
			for _, id := range []string{"nic-irq-concentration", "nic-irq-sharing"} {
				want, got := run(t, full, id), run(t, only, id)
				switch {
				case want.Status == doctor.NotApplicable && got.Status == doctor.NotChecked && strings.Contains(got.Reason, "/sys/class/net absent"):
					// one queue is "nothing to spread" only when the
					// queues are known
				case filepath.Base(dir) == "netutils-tg3-mlx4-2socket" && id == "nic-irq-concentration":
					// tg3 numbers its rx vectors from 1: without the driver
					// the names do not number eth1's queues, so only its
					// tx-0 is judged (unmapVectorNumbered)
					if got.Status != doctor.OK {
						t.Errorf("%s: %s %s%s", id, got.Status, got.Message, got.Reason)
					}
				case got.Status != want.Status:
					t.Errorf("%s: %s %s%s\n  full tree: %s %s%s", id, got.Status, got.Message, got.Reason, want.Status, want.Message, want.Reason)
				}
				if got.Status == doctor.Fired && !strings.Contains(strings.Join(got.Notes, "\n"), "inferred from /proc/interrupts names only") {
					t.Errorf("%s fired on inferred NICs without saying so: %v", id, got.Notes)
				}
			}
			if fd := run(t, only, "nic-irq-node-split"); fd.Status == doctor.Fired || fd.Status == doctor.OK {
				t.Errorf("node split judged without topology: %s %s", fd.Status, fd.Message)
			}
		})
	}
}

// With two samples, irq-affinity-moving judges the inferred NICs' queue
// IRQs too (the netutils i40e capture's interrupts alone).
func TestMovingOnInterruptsOnlyTree(t *testing.T) {
	data, err := os.ReadFile("../../../testdata/hosts/netutils-i40e-e1000e-e3/proc/interrupts")
	if err != nil {
		t.Fatal(err)
	}
	f := treeFacts(t, testutil.WriteTree(t, map[string]string{"proc/interrupts": string(data), "sys/.keep": ""}))
	withSample(f)
	fd := run(t, f, "irq-affinity-moving")
	t.Logf("%s %s%s %v", fd.Status, fd.Message, fd.Reason, fd.Notes)
	if fd.Status == doctor.NotChecked || fd.Status == doctor.NotApplicable {
		t.Errorf("not judged: %s %s", fd.Status, fd.Reason)
	}
	if !strings.Contains(strings.Join(fd.Notes, "\n"), "eth0 is inferred") {
		t.Errorf("no inferred note: %v", fd.Notes)
	}
}
