package host

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// interruptsOnly reads a tree holding only proc/interrupts (and an empty
// sys), as a reviewer holding a machine's /proc/interrupts alone would.
func interruptsOnly(t *testing.T, text string) *Snapshot {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"proc", "sys"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "proc/interrupts"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, err := NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Read(fs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// queueMapping is mapping without the "!" of an IRQ whose queue the tree
// lacks: the sysfs tree knows its queues, the inferred NIC does not.
func queueMapping(n *NIC) string {
	var out []string
	for _, f := range strings.Fields(mapping(n)) {
		if strings.HasPrefix(f, "other:") || strings.HasPrefix(f, "unmapped:") || strings.HasPrefix(f, "noirq:") {
			continue
		}
		out = append(out, strings.TrimSuffix(f, "!"))
	}
	return strings.Join(out, " ")
}

// Every fixture tree's own /proc/interrupts, alone: each inferred NIC is
// one the tree's sysfs has (under its interface name, or its PCI function
// or virtio device when the names carry no interface name) and maps the
// same IRQs to the same queues, with the same rule; no other IRQ becomes a
// NIC.
func TestInferredNICsMatchTheTreesSysfs(t *testing.T) {
	for _, name := range fixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			full, _ := readFixture(t, name, Options{})
			data, err := os.ReadFile(filepath.Join(hostsDir, name, "proc/interrupts"))
			if err != nil {
				t.Skip("no proc/interrupts in this tree")
			}
			only := interruptsOnly(t, string(data))
			for i := range only.NICs {
				n := &only.NICs[i]
				if n.Inferred == "" || n.RxQueues != nil || n.NUMANode != nil {
					t.Errorf("%s: not labelled inferred, or with queues or a node: %+v", n.Name, n)
				}
				real := sysfsTwin(full, n)
				if real == nil {
					t.Errorf("%s (%s): inferred from %s, but the tree's sysfs has no such NIC", n.Name, mapping(n), irqNames(n))
					continue
				}
				if got, want := queueMapping(n), queueMapping(real); got != want && !strings.Contains(want, got) {
					t.Errorf("%s: inferred %s\n  sysfs %s (%s)", n.Name, got, want, real.Name)
				}
			}
		})
	}
}

// sysfsTwin is the tree's NIC that the inferred n stands for.
func sysfsTwin(s *Snapshot, n *NIC) *NIC {
	for i := range s.NICs {
		r := &s.NICs[i]
		base := r.Device[strings.LastIndex(r.Device, "/")+1:]
		if r.Name == n.Name || (n.PCIAddress == n.Name && r.PCIAddress == n.Name) || (n.Device != "" && base == n.Device) {
			return r
		}
	}
	return nil
}

func irqNames(n *NIC) string {
	var out []string
	for _, q := range n.QueueIRQs {
		out = append(out, q.Name)
	}
	for _, q := range n.OtherIRQs {
		out = append(out, q.Name)
	}
	return strings.Join(out, ", ")
}

// The held-out captures that are /proc/interrupts text, each alone in a
// tree: the capture's NIC is inferred and its queue IRQs are the ones the
// matcher maps given its name (and driver and PCI address when the
// capture says them), or a part of them when the names cannot number the
// queues without the driver; and every IRQ an inferred NIC holds is named
// after it or owned by its PCI function, never another device's (timer,
// i8042, ata_piix, blkif, ptp_qoriq ... stay NIC-less).
func TestInferredNICsOnHeldOutCaptures(t *testing.T) {
	// The captures' other NICs, by the test's name: each has its own lines.
	others := map[string][]string{
		"separate rx and tx vectors and a misc vector":                                 {"eth9"},
		"RISC-V board: PLIC chip of two words, IF-N vectors with Edge after the hwirq": {"eth0", "eth1"},
		"four NICs with IF-N vectors: each keeps its own":                              {"eth0"},
		"Xen dom0: Phys-irq chip, rx vectors numbered down, one tx vector":             {"peth0"},
	}
	for _, tt := range heldOutCaptures {
		if tt.text == "" {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			s := interruptsOnly(t, withHeader(tt.text))
			var names []string
			for i := range s.NICs {
				n := &s.NICs[i]
				names = append(names, n.Name)
				if n.Name != tt.ifname && n.Name != tt.bus && !slices.Contains(others[tt.name], n.Name) {
					t.Errorf("%s inferred, which the capture does not show as a NIC", n.Name)
				}
				for _, num := range heldIRQs(n) {
					q := s.Interrupts.IRQ(num)
					bus, _, _ := msiSource(q)
					if !strings.Contains(q.Name, n.Name) && (n.PCIAddress == "" || bus != n.PCIAddress) {
						t.Errorf("%s holds IRQ %d %q, which is neither named after it nor its PCI function's", n.Name, num, q.Name)
					}
				}
			}
			var wantQ []string
			for _, f := range strings.Fields(tt.want) {
				if !strings.HasPrefix(f, "other:") && !strings.HasPrefix(f, "unmapped:") {
					wantQ = append(wantQ, f)
				}
			}
			n := s.NIC(tt.ifname)
			if n == nil && tt.bus != "" {
				n = s.NIC(tt.bus)
			}
			if n == nil {
				if len(wantQ) > 0 && tt.driver == "" {
					t.Fatalf("%s: no NIC %s inferred (have %v)", tt.source, tt.ifname, names)
				}
				t.Logf("%s not inferred (have %v): the names alone do not show it", tt.ifname, names)
				return
			}
			got, want := queueMapping(n), strings.Join(wantQ, " ")
			if got != want && (tt.driver == "" || !strings.Contains(want, got)) {
				t.Errorf("%s\n got  %s\n want %s", tt.source, got, want)
			}
			t.Logf("inferred %v; %s: %s", names, n.Name, mapping(n))
		})
	}
}

func heldIRQs(n *NIC) []int {
	var out []int
	for _, q := range n.QueueIRQs {
		out = append(out, q.IRQ)
	}
	for _, q := range append(slices.Clone(n.OtherIRQs), n.UnmappedIRQs...) {
		out = append(out, q.IRQ)
	}
	return out
}

// A capture's IRQ names can hold terminal controls; the summary escapes
// them wherever they appear: the IRQ's name, and the name of a NIC
// inferred from it.
func TestSummaryEscapesCapturedNames(t *testing.T) {
	s := interruptsOnly(t, "           CPU0       CPU1\n"+
		" 33:        10         20   PCI-MSI 1-edge      eth0-TxRx-0\n"+
		" 34:        10         20   PCI-MSI 2-edge      eth0-TxRx-1\x1b[31mRED\n"+
		" 35:        10         20   PCI-MSI 3-edge      \x1b]0;evil\x07eth9-TxRx-0\n")
	var out strings.Builder
	if err := WriteSummary(&out, s); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(out.String(), "\x1b\x07") || !strings.Contains(out.String(), `\x1b]0;evil\aeth9`) {
		t.Errorf("summary:\n%q", out.String())
	}
}

// TestInferredNameIsTheInterfaces: a driver that puts words between the
// interface and the queue number (bnx2x's eth3-fp-N, vmxnet3's
// eth4-rxtx-N beside its eth4-event-N) infers the interface eth3, eth4,
// not "eth3-fp": the rule that explains the name with the shortest
// interface name wins, whatever the order of the rules.
func TestInferredNameIsTheInterfaces(t *testing.T) {
	s := interruptsOnly(t, "           CPU0       CPU1\n"+
		" 40:   10   0   PCI-MSI 1048576-edge      eth3\n"+
		" 41:   10   0   PCI-MSI 1048577-edge      eth3-fp-0\n"+
		" 42:   10   0   PCI-MSI 1048578-edge      eth3-fp-1\n"+
		" 43:   10   0   PCI-MSI 1048579-edge      eth3-fp-2\n"+
		" 50:   10   0   PCI-MSI 2097152-edge      eth4-rxtx-0\n"+
		" 51:   10   0   PCI-MSI 2097153-edge      eth4-rxtx-1\n"+
		" 52:   10   0   PCI-MSI 2097154-edge      eth4-event-2\n")
	var names []string
	for _, n := range s.NICs {
		names = append(names, n.Name)
	}
	if !slices.Equal(names, []string{"eth3", "eth4"}) {
		t.Fatalf("inferred NICs %q, want [eth3 eth4]", names)
	}
	if n := s.NIC("eth3"); len(n.QueueIRQs) != 3 {
		t.Errorf("eth3: %s, want its three fp vectors as queues", mapping(n))
	}
}
