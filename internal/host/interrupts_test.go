package host

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseInterrupts(t *testing.T) {
	in := `           CPU0       CPU1       
 24:          1          0  IO-APIC   5-edge      ACPI:Ged
 38:          0       2042 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0
 75:         10         20  IR-PCI-MSI 1048576-edge      eth0-TxRx-0
 11:       5123       4911     GICv3  27 Level     arch_timer
 90:          1          2  IR-PCI-MSI-edge      eth1-TxRx-1
 17:       9825          0   IO-APIC  17-fasteoi   ehci_hcd:usb1, i801_smbus
 40:          0          0 PCI-MSIX-0000:00:04.0   0-edge
 25:          1        103  Hyper-V PCIe MSI 4138200989697-edge      mana_q0@pci:7870:00:00.0
 26:   27389481          0  SiFive PLIC 131 Edge      eth0
114:        749          0   xen-dyn-event     eth0
NMI:          0          0   Non-maskable interrupts
ERR:          0
`
	got, err := parseInterrupts([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := Interrupts{
		CPUs: []int{0, 1},
		IRQs: []IRQ{
			{Number: 11, Counts: []uint64{5123, 4911}, Total: 10034, Chip: "GICv3", HWIRQ: "27", Trigger: "level", Name: "arch_timer"},
			{Number: 17, Counts: []uint64{9825, 0}, Total: 9825, Chip: "IO-APIC", HWIRQ: "17", Trigger: "fasteoi", Name: "ehci_hcd:usb1, i801_smbus"},
			{Number: 24, Counts: []uint64{1, 0}, Total: 1, Chip: "IO-APIC", HWIRQ: "5", Trigger: "edge", Name: "ACPI:Ged"},
			// Chip names of several words: Azure's Hyper-V PCI MSI domain
			// (linux-hyperv 2024-03-14, the azure-mana-4cpu capture) and
			// a RISC-V PLIC (orangepi-xunlong/openwrt issue #46).
			{Number: 25, Counts: []uint64{1, 103}, Total: 104, Chip: "Hyper-V PCIe MSI", HWIRQ: "4138200989697", Trigger: "edge", Name: "mana_q0@pci:7870:00:00.0"},
			{Number: 26, Counts: []uint64{27389481, 0}, Total: 27389481, Chip: "SiFive PLIC", HWIRQ: "131", Trigger: "edge", Name: "eth0"},
			{Number: 38, Counts: []uint64{0, 2042}, Total: 2042, Chip: "PCI-MSIX-0000:00:03.0", HWIRQ: "1", Trigger: "edge", Name: "virtio2-input.0"},
			{Number: 40, Counts: []uint64{0, 0}, Chip: "PCI-MSIX-0000:00:04.0", HWIRQ: "0", Trigger: "edge"},
			{Number: 75, Counts: []uint64{10, 20}, Total: 30, Chip: "IR-PCI-MSI", HWIRQ: "1048576", Trigger: "edge", Name: "eth0-TxRx-0"},
			{Number: 90, Counts: []uint64{1, 2}, Total: 3, Chip: "IR-PCI-MSI-edge", Name: "eth1-TxRx-1"},
			{Number: 114, Counts: []uint64{749, 0}, Total: 749, Chip: "xen-dyn-event", Name: "eth0"},
		},
		Counters: []InterruptCounter{
			{Name: "NMI", Counts: []uint64{0, 0}, Description: "Non-maskable interrupts"},
			{Name: "ERR", Counts: []uint64{0}},
		},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(CPUSet{})); diff != "" {
		t.Errorf("parseInterrupts (-want +got):\n%s", diff)
	}
	if acts := got.IRQ(17).Actions(); len(acts) != 2 || acts[1] != "i801_smbus" {
		t.Errorf("Actions() = %q", acts)
	}
	if got.IRQ(12) != nil || got.IRQ(90) == nil {
		t.Error("IRQ lookup is wrong")
	}
}

// Offline CPUs are missing from the header; columns map to the CPUs named.
func TestParseInterruptsSparseColumns(t *testing.T) {
	got, err := parseInterrupts([]byte("      CPU0  CPU2  CPU5\n  9:  1  2  3  IO-APIC  9-fasteoi  acpi\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.CPUs, []int{0, 2, 5}) {
		t.Errorf("CPUs = %v", got.CPUs)
	}
	if c := got.CountsByCPU(got.IRQ(9)); c[5] != 3 || c[2] != 2 {
		t.Errorf("CountsByCPU = %v", c)
	}
}

func TestParseInterruptsErrors(t *testing.T) {
	tests := []struct {
		name, in string
		line     int
	}{
		{"no header", "", 1},
		{"bad header", "CPU0 GPU1\n", 1},
		{"short IRQ line", "CPU0 CPU1\n 5: 1 IO-APIC 5-edge x\n", 2},
		{"no label", "CPU0\n 1 2 3\n", 2},
		{"overflow", "CPU0\n 5: 99999999999999999999999 IO-APIC x\n", 2},
	}
	for _, tt := range tests {
		_, err := parseInterrupts([]byte(tt.in))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != tt.line || !errors.Is(err, ErrParse) {
			t.Errorf("%s: error %v, want a ParseError on line %d", tt.name, err, tt.line)
		}
	}
	// A bad line does not lose the good ones.
	got, err := parseInterrupts([]byte("CPU0\n 1: 5 IO-APIC 1-edge a\n 2: x\n 3: 7 IO-APIC 3-edge c\n"))
	if err == nil || len(got.IRQs) != 2 || !strings.Contains(err.Error(), ":3:") && !strings.Contains(err.Error(), "input:3") {
		t.Errorf("partial parse: %d IRQs, err %v", len(got.IRQs), err)
	}
}

// TestCPUShares: the busiest CPUs first, at most `most`, the CPUs that
// took under half a percent counted rather than shown as "0%".
func TestCPUShares(t *testing.T) {
	for _, c := range []struct {
		by   map[int]uint64
		most int
		want string
	}{
		{map[int]uint64{}, 3, "no interrupts"},
		{map[int]uint64{0: 69, 4: 31}, 3, "CPU0 69%, CPU4 31%"},
		{map[int]uint64{3: 9990, 1: 4, 0: 6}, 3, "CPU3 >99%, 2 more, under 1% each"},
		{map[int]uint64{3: 10}, 3, "CPU3 100%"},
		{map[int]uint64{1: 40, 0: 30, 2: 20, 3: 10}, 2, "CPU1 40%, CPU0 30%, 2 more"},
		{map[int]uint64{5: 1, 2: 1}, 3, "CPU2 50%, CPU5 50%"}, // a tie: by CPU number
	} {
		var total uint64
		for _, n := range c.by {
			total += n
		}
		if got := CPUShares(c.by, total, c.most); got != c.want {
			t.Errorf("CPUShares(%v, %d) = %q, want %q", c.by, c.most, got, c.want)
		}
	}
}
