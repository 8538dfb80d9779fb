package host

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// go test ./internal/host -fuzz FuzzParseInterrupts (and the others)
// explore inputs beyond the seeds; without -fuzz the seeds run as tests.

func FuzzParseInterrupts(f *testing.F) {
	f.Add([]byte("           CPU0       CPU1\n 38:          0       2042 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0\nNMI:          0          0   Non-maskable interrupts\nERR:          0\n"))
	f.Add([]byte("      CPU0  CPU2\n 11:  5  6  GICv3  27 Level     arch_timer\nIPI0:  1  2  Rescheduling interrupts\nErr: 0\n"))
	f.Add([]byte("CPU0\n 75: 10 IR-PCI-MSI-edge eth0-TxRx-0\n 17: 9825 IO-APIC 17-fasteoi ehci_hcd:usb1, i801_smbus\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := parseInterrupts(data)
		if err != nil && !strings.Contains(err.Error(), ":") {
			t.Fatalf("error without a position: %v", err)
		}
		for i, q := range in.IRQs {
			if len(q.Counts) != len(in.CPUs) {
				t.Fatalf("IRQ %d has %d counts for %d columns", q.Number, len(q.Counts), len(in.CPUs))
			}
			var sum uint64
			for _, c := range q.Counts {
				sum += c
			}
			if sum != q.Total {
				t.Fatalf("IRQ %d total %d, counts sum to %d", q.Number, q.Total, sum)
			}
			if i > 0 && in.IRQs[i-1].Number > q.Number {
				t.Fatal("IRQs not sorted")
			}
			if in.IRQ(q.Number) == nil {
				t.Fatalf("IRQ(%d) not found", q.Number)
			}
		}
		for _, c := range in.Counters {
			if len(c.Counts) > len(in.CPUs) {
				t.Fatalf("counter %s has more counts than columns", c.Name)
			}
		}
	})
}

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0-3,8,10-11", "", "0", "0-1023:2/256", "1,1023-1025,4095", "5-3", "x", "0-65535"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := ParseCPUList(s)
		if err != nil {
			return
		}
		// Canonical form round-trips, through both notations.
		list := set.List()
		back, err := ParseCPUList(list)
		if err != nil || !back.Equal(set) || back.List() != list {
			t.Fatalf("%q -> %q -> %q (%v)", s, list, back.List(), err)
		}
		mask := set.Mask()
		fromMask, err := ParseCPUMask(mask)
		if err != nil || !fromMask.Equal(set) {
			t.Fatalf("%q -> mask %q -> %q (%v)", s, mask, fromMask.List(), err)
		}
		if set.Len() != len(set.CPUs()) || (set.Len() > 0 && set.Max() != set.CPUs()[set.Len()-1]) {
			t.Fatalf("Len/Max inconsistent for %q", s)
		}
	})
}

func FuzzParseCPUMask(f *testing.F) {
	for _, s := range []string{"ff,00000000,00000001", "3", "0", "00000000,00000040,00000000,00000000", "1,", "g", "ffffffff,ffffffff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := ParseCPUMask(s)
		if err != nil {
			return
		}
		// The kernel's width (hex digits of the input) gives the input back,
		// up to letter case.
		digits := 0
		for _, w := range strings.Split(strings.TrimSpace(s), ",") {
			digits += len(w)
		}
		words := strings.Split(strings.TrimSpace(s), ",")
		if len(words[0]) <= 8 && allFull(words[1:]) {
			if got := set.MaskWidth(digits * 4); !strings.EqualFold(got, strings.TrimSpace(s)) {
				t.Fatalf("%q -> %q", s, got)
			}
		}
		back, err := ParseCPUList(set.List())
		if err != nil || !back.Equal(set) {
			t.Fatalf("%q -> list %q failed: %v", s, set.List(), err)
		}
	})
}

// allFull reports whether every word has 8 digits (the kernel's form).
func allFull(words []string) bool {
	for _, w := range words {
		if len(w) != 8 {
			return false
		}
	}
	return true
}

// FuzzQueueMatcher feeds the matcher NIC values and IRQ names with every
// kind of evidence (msi_irqs, the PCI column, x86 hwirq, none; action
// directories; affinity_hint, distinct or shared) and checks what must
// hold whatever the names: each IRQ is classified at most once, each
// mapped IRQ says how and each other or unmapped IRQ why, the queues only
// list mapped IRQs, and the hints never change the mapping.
func FuzzQueueMatcher(f *testing.F) {
	f.Add("eth0", "ixgbe", "0000:3b:00.0", "eth0-TxRx-0\neth0-TxRx-1\neth0", uint8(2), uint8(3), uint16(0), uint16(0))
	f.Add("ens4", "gve", "0000:00:04.0", "gve-ntfy-blk0@pci:0000:00:04.0\ngve-ntfy-blk1@pci:0000:00:04.0\ngve-mgmnt@pci:0000:00:04.0", uint8(1), uint8(1), uint16(7), uint16(3))
	f.Add("enp39s0", "ena", "0000:27:00.0", "ena-mgmnt@pci:0000:27:00.0\nenp39s0-Tx-Rx-0\n\n", uint8(4), uint8(1), uint16(0), uint16(0))
	f.Add("eth0", "", "0000:00:03.0", "virtio1-config\nvirtio1-input.0\nvirtio1-output.0", uint8(1), uint8(0), uint16(5), uint16(0xffff))
	f.Add("eth9", "foo", "0000:65:00.1", "a\nb", uint8(2), uint8(2), uint16(0), uint16(0))
	f.Add("x", "hns3", "0000:7d:00.0", "hns3-0000:7d:00.0-TxRx-2\nhclge-misc-0000:7d:00.0\nx-rx-99999999999999999999", uint8(3), uint8(3), uint16(1), uint16(5))
	f.Add("net1", "iavf", "0000:b5:02.7", "iavf-0000:b5:02.7:mbx\niavf-net1-TxRx-0\niavf-net1-TxRx-0\niavf-net1-TxRx-1", uint8(2), uint8(1), uint16(3), uint16(0))
	f.Add("eth0", "intel-eth-pci", "0000:00:1d.0", "eth0:mac\neth0:rx-0\neth0:tx-0\neth0:rx-0\neth0-rxtx1", uint8(2), uint8(2), uint16(0), uint16(0))
	f.Fuzz(func(t *testing.T, ifname, driver, bus, names string, queues, chipKind uint8, msiMask, hintMask uint16) {
		if ifname == "" || strings.ContainsAny(ifname, "/\n") {
			return
		}
		n, ev := fuzzMatcherInput(ifname, driver, bus, names, queues, chipKind, msiMask)
		// affinity_hint: a CPU per IRQ where hintMask says so, repeating
		// every 4 IRQs when chipKind's bit 3 is set (shared hints).
		ev.hint = func(irq int) *CPUSet {
			i := irq - 100
			if hintMask&(1<<(i%16)) == 0 {
				return nil
			}
			cpu := i
			if chipKind&8 != 0 {
				cpu = i % 4
			}
			set := NewCPUSet(cpu)
			return &set
		}
		mapNIC(n, ev, irqRules, chipKind&4 != 0)
		// The hints are evidence shown, never a numbering: without them
		// the mapping is the same.
		bare, bev := fuzzMatcherInput(ifname, driver, bus, names, queues, chipKind, msiMask)
		mapNIC(bare, bev, irqRules, chipKind&4 != 0)
		if a, b := mapping(n), mapping(bare); a != b {
			t.Fatalf("affinity_hint changed the mapping:\n with    %s\n without %s", a, b)
		}
		checkMatcherInvariants(t, n)
	})
}

// fuzzMatcherInput builds the NIC and the IRQs of one fuzz case.
func fuzzMatcherInput(ifname, driver, bus, names string, queues, chipKind uint8, msiMask uint16) (*NIC, irqEvidence) {
	n := nicWithQueues(ifname, driver, bus, "/sys/devices/pci0000:00/"+bus+"/virtio1", int(queues%40))
	ev := irqEvidence{in: &Interrupts{CPUs: []int{0}}}
	for i, name := range strings.Split(names, "\n") {
		q := IRQ{Number: 100 + i, Counts: []uint64{0}, Name: name}
		switch chipKind % 4 {
		case 1:
			q.Chip, q.HWIRQ = "PCI-MSIX-"+bus, strconv.Itoa(i)
		case 2:
			q.Chip, q.HWIRQ = "IR-PCI-MSI", strconv.Itoa(52955136+i)
		case 3:
			q.Chip, q.HWIRQ = "PCI-MSI-X", ""
		}
		if msiMask&(1<<(i%16)) != 0 {
			n.MSIIRQs = append(n.MSIIRQs, q.Number)
		}
		ev.in.IRQs = append(ev.in.IRQs, q)
	}
	ev.actions = func(irq int) []string { return []string{ifname + "-TxRx-" + strconv.Itoa(irq%3)} }
	return n, ev
}

// checkMatcherInvariants is what holds whatever the names and evidence.
func checkMatcherInvariants(t *testing.T, n *NIC) {
	seen := map[int]bool{}
	mapped := map[int]bool{}
	claimed := map[string]int{} // one IRQ per rule, kind and queue
	for _, m := range n.QueueIRQs {
		if seen[m.IRQ] || m.How == "" || m.Queue < 0 || (m.Kind != QueueRx && m.Kind != QueueTx && m.Kind != QueueCombined) {
			t.Fatalf("bad queue IRQ %+v (seen %v)", m, seen[m.IRQ])
		}
		k := fmt.Sprintf("%s %s-%d", m.Rule, m.Kind, m.Queue)
		if prev, dup := claimed[k]; dup {
			t.Fatalf("IRQs %d and %d both mapped to %s", prev, m.IRQ, k)
		}
		claimed[k] = m.IRQ
		seen[m.IRQ], mapped[m.IRQ] = true, true
	}
	for _, m := range append(n.OtherIRQs, n.UnmappedIRQs...) {
		if seen[m.IRQ] || m.Why == "" {
			t.Fatalf("bad other/unmapped IRQ %+v (seen %v)", m, seen[m.IRQ])
		}
		seen[m.IRQ] = true
	}
	for _, q := range n.RxQueues {
		for _, irq := range q.IRQs {
			if !mapped[irq] {
				t.Fatalf("rx-%d lists IRQ %d that is not mapped", q.Index, irq)
			}
		}
	}
	for _, q := range n.TxQueues {
		for _, irq := range q.IRQs {
			if !mapped[irq] {
				t.Fatalf("tx-%d lists IRQ %d that is not mapped", q.Index, irq)
			}
		}
	}
}
