package host

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// irqsNamed builds an Interrupts with IRQs numbered from 100 and named in
// order.
func irqsNamed(names ...string) *Interrupts {
	in := &Interrupts{CPUs: []int{0}}
	for i, n := range names {
		in.IRQs = append(in.IRQs, IRQ{Number: 100 + i, Counts: []uint64{0}, Name: n})
	}
	return in
}

func nicWithQueues(name, driver, bus, device string, n int, msi ...int) *NIC {
	nic := &NIC{Name: name, Driver: driver, PCIAddress: bus, Device: device, MSIIRQs: msi}
	for q := 0; q < n; q++ {
		nic.RxQueues = append(nic.RxQueues, RxQueue{Index: q})
		nic.TxQueues = append(nic.TxQueues, TxQueue{Index: q})
	}
	return nic
}

// mapping renders a NIC's classification compactly: "irq:kind-queue(rule)",
// "other:irq", "unmapped:irq".
func mapping(n *NIC) string {
	var out []string
	for _, m := range n.QueueIRQs {
		s := fmt.Sprintf("%d:%s-%d(%s)", m.IRQ, m.Kind, m.Queue, m.Rule)
		if m.NoQueue {
			s += "!"
		}
		out = append(out, s)
	}
	for _, m := range n.OtherIRQs {
		out = append(out, fmt.Sprintf("other:%d", m.IRQ))
	}
	for _, m := range n.UnmappedIRQs {
		out = append(out, fmt.Sprintf("unmapped:%d", m.IRQ))
	}
	if len(n.UnmappedQueues) > 0 {
		out = append(out, "noirq:"+strings.Join(n.UnmappedQueues, ","))
	}
	return strings.Join(out, " ")
}

func TestMapQueueIRQs(t *testing.T) {
	const bus = "0000:3b:00.0"
	tests := []struct {
		name     string
		nic      *NIC
		irqs     []string
		patterns []string
		want     string
	}{
		{"mlx5 with async and a vector beyond the channels",
			nicWithQueues("ens1f0np0", "mlx5_core", bus, "/sys/devices/pci0000:3a/"+bus, 2, 100, 101, 102, 103),
			[]string{"mlx5_async0@pci:" + bus, "mlx5_comp0@pci:" + bus, "mlx5_comp1@pci:" + bus, "mlx5_comp2@pci:" + bus, "mlx5_comp0@pci:0000:3b:00.1"}, nil,
			"101:combined-0(mlx5) 102:combined-1(mlx5) 103:combined-2(mlx5)! other:100"},
		{"intel TxRx, and rx/tx split",
			nicWithQueues("eth0", "ixgbe", bus, "/sys/devices/x/"+bus, 3),
			[]string{"eth0-TxRx-0", "eth0-TxRx-1", "eth0-rx-2", "eth0-tx-2", "eth0", "eth00-TxRx-0", "eth0-TxRx-1x"}, nil,
			// eth0-TxRx-1x mentions eth0 but fits no rule: reported, not guessed.
			"100:combined-0(if-txrx) 101:combined-1(if-txrx) 102:rx-2(if-rx) 103:tx-2(if-tx) other:104 unmapped:106"},
		{"i40e driver-if names and misc",
			nicWithQueues("enP1s15", "i40e", "0001:00:0f.0", "/sys/devices/x/0001:00:0f.0", 2, 100, 101, 102),
			[]string{"i40e-0001:00:0f.0:misc", "i40e-enP1s15-TxRx-0", "i40e-enP1s15-TxRx-1"}, nil,
			"101:combined-0(driver-if-txrx) 102:combined-1(driver-if-txrx) other:100"},
		{"hns3 counts vectors by two",
			nicWithQueues("enp125s0f0", "hns3", "0000:7d:00.0", "/sys/devices/x/0000:7d:00.0", 3, 100, 101, 102, 103),
			[]string{"hns3-0000:7d:00.0-TxRx-0", "hns3-0000:7d:00.0-TxRx-2", "hns3-0000:7d:00.0-TxRx-4", "hclge-misc-0000:7d:00.0"}, nil,
			"100:combined-0(hns3) 101:combined-1(hns3) 102:combined-2(hns3) other:103"},
		{"ENA",
			nicWithQueues("eth1", "ena", "0000:00:06.0", "/sys/devices/x/0000:00:06.0", 2),
			[]string{"ena-mgmnt@pci:0000:00:06.0", "eth1-Tx-Rx-0", "eth1-Tx-Rx-1"}, nil,
			"101:combined-0(ena) 102:combined-1(ena) other:100"},
		{"hinic, both spellings",
			nicWithQueues("enp25s0", "hinic", "0000:19:00.0", "/sys/devices/x/0000:19:00.0", 2),
			[]string{"enp25s0_qp0", "enp25s0_qp_1", "enp25s0_qp0x"}, nil,
			"100:combined-0(hinic) 101:combined-1(hinic) unmapped:102"},
		{"virtio through the PCI device's msi_irqs, shared vector unmapped",
			nicWithQueues("eth0", "virtio_net", "0000:00:03.0", "/sys/devices/pci0000:00/0000:00:03.0/virtio2", 2, 100, 101, 102, 103, 104),
			[]string{"virtio2-config", "virtio2-input.0", "virtio2-output.0", "virtio2-input.1", "virtio2-virtqueues", "virtio3-input.0"}, nil,
			"101:rx-0(virtio) 102:tx-0(virtio) 103:rx-1(virtio) other:100 other:104 noirq:tx-1"},
		{"user pattern first, name escaped",
			nicWithQueues("eth0.100", "foo", "", "/sys/devices/x", 2),
			[]string{"eth0.100_queue_0", "eth0x100_queue_1", "eth0.100_queue_1"}, []string{"REGEXP:VAR_ETH_queue_VAR_QUEUE"},
			"100:combined-0(user:REGEXP:VAR_ETH_queue_VAR_QUEUE) 102:combined-1(user:REGEXP:VAR_ETH_queue_VAR_QUEUE)"},
		{"the write-up's pattern",
			nicWithQueues("enp25s0", "hinic", "0000:19:00.0", "/sys/devices/x/0000:19:00.0", 2),
			[]string{"enp25s0_qp0", "enp25s0_qp1"}, []string{"REGEXP:VAR_ETH_qpVAR_QUEUE"},
			"100:combined-0(user:REGEXP:VAR_ETH_qpVAR_QUEUE) 101:combined-1(user:REGEXP:VAR_ETH_qpVAR_QUEUE)"},
		{"nothing known: no per-queue complaint",
			nicWithQueues("wlan0", "iwlwifi", "0000:02:00.0", "/sys/devices/x/0000:02:00.0", 2),
			[]string{"iwlwifi"}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rules []irqRule
			for _, p := range tt.patterns {
				r, err := parseIRQPattern(p)
				if err != nil {
					t.Fatal(err)
				}
				rules = append(rules, r)
			}
			mapNIC(tt.nic, irqEvidence{in: irqsNamed(tt.irqs...)}, append(rules, irqRules...), len(rules) > 0)
			if got := mapping(tt.nic); got != tt.want {
				t.Errorf("mapping\n got  %s\n want %s", got, tt.want)
			}
		})
	}
}

func TestQueueIRQsOnQueues(t *testing.T) {
	n := nicWithQueues("eth0", "ixgbe", "", "/sys/devices/x", 2)
	mapNIC(n, irqEvidence{in: irqsNamed("eth0-TxRx-0", "eth0-rx-1", "eth0-tx-1")}, irqRules, false)
	want := []RxQueue{{Index: 0, IRQs: []int{100}}, {Index: 1, IRQs: []int{101}}}
	if diff := cmp.Diff(want, n.RxQueues, cmp.AllowUnexported(CPUSet{})); diff != "" {
		t.Errorf("rx queues (-want +got):\n%s", diff)
	}
	if !slices.Equal(n.TxQueues[1].IRQs, []int{102}) || !slices.Equal(n.TxQueues[0].IRQs, []int{100}) {
		t.Errorf("tx queues %+v", n.TxQueues)
	}
}

func TestParseIRQPatternErrors(t *testing.T) {
	for _, bad := range []string{"VAR_ETH_qpVAR_QUEUE", "REGEXP:VAR_ETH_qp", "REGEXP:VAR_QUEUE_VAR_QUEUE", "REGEXP:(VAR_ETH)_VAR_QUEUE", "REGEXP:VAR_ETH_[VAR_QUEUE"} {
		if err := ValidateIRQPattern(bad); err == nil {
			t.Errorf("ValidateIRQPattern(%q): no error", bad)
		}
	}
	for _, good := range []string{"REGEXP:VAR_ETH_qpVAR_QUEUE", "REGEXP:VAR_DRIVER-VAR_BUSINFO-TxRx-VAR_QUEUE", "REGEXP:.*VAR_ETH-(?:rx|tx)-VAR_QUEUE"} {
		if err := ValidateIRQPattern(good); err != nil {
			t.Errorf("ValidateIRQPattern(%q): %v", good, err)
		}
	}
}
