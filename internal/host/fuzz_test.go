package host

import (
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
