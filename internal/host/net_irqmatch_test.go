package host

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"redline/internal/testutil"
)

// irqLine is one IRQ for the matcher's tests: number, chip, hwirq, name.
type irqLine struct {
	n           int
	chip, hwirq string
	name        string
}

func evidenceOf(lines ...irqLine) irqEvidence {
	in := &Interrupts{CPUs: []int{0}}
	for _, l := range lines {
		in.IRQs = append(in.IRQs, IRQ{Number: l.n, Counts: []uint64{0}, Chip: l.chip, HWIRQ: l.hwirq, Name: l.name})
	}
	return irqEvidence{in: in}
}

// named gives IRQs numbered from 100 with no chip evidence.
func named(names ...string) []irqLine {
	var out []irqLine
	for i, n := range names {
		out = append(out, irqLine{n: 100 + i, name: n})
	}
	return out
}

// msix gives IRQs numbered from 100 on the 6.2+ PCI column of bus,
// vector index i.
func msix(bus string, names ...string) []irqLine {
	var out []irqLine
	for i, n := range names {
		out = append(out, irqLine{n: 100 + i, chip: "PCI-MSIX-" + bus, hwirq: strconv.Itoa(i), name: n})
	}
	return out
}

// Every driver family the matcher knows, as its driver names its vectors.
func TestMatcherFamilies(t *testing.T) {
	const bus = "0000:3b:00.0"
	dev := "/sys/devices/pci0000:3a/" + bus
	tests := []struct {
		family string
		nic    *NIC
		irqs   []irqLine
		want   string
	}{
		{"mlx5", nicWithQueues("ens1f0np0", "mlx5_core", bus, dev, 2),
			named("mlx5_async0@pci:"+bus, "mlx5_comp0@pci:"+bus, "mlx5_comp1@pci:"+bus),
			"101:combined-0(mlx5) 102:combined-1(mlx5) other:100"},
		{"mlx4_en: IF-N queues, mlx4-N@pci event queues", nicWithQueues("eth2", "mlx4_en", bus, dev, 2),
			named("mlx4-1@pci:"+bus, "mlx4-2@pci:"+bus, "eth2-0", "eth2-1"),
			"102:combined-0(if-n) 103:combined-1(if-n) other:100 other:101"},
		{"sfc IF-N", nicWithQueues("ens5f0", "sfc", bus, dev, 2),
			named("ens5f0-0", "ens5f0-1"), "100:combined-0(if-n) 101:combined-1(if-n)"},
		{"qlcnic rx, tx and tx-0-rx", nicWithQueues("eth3", "qlcnic", bus, dev, 2),
			named("eth3-tx-0-rx-0", "eth3-rx-1", "eth3-tx-1"),
			"100:rx-0(qlcnic) 101:rx-1(if-rx) 102:tx-1(if-tx)"},
		{"qede fastpath", nicWithQueues("ens1f0", "qede", bus, dev, 1),
			named("ens1f0-fp-0"), "100:combined-0(if-fp)"},
		{"be2net event queues", nicWithQueues("eth4", "be2net", bus, dev, 2),
			named("eth4-q0", "eth4-q1"), "100:combined-0(if-q) 101:combined-1(if-q)"},
		{"cxgb4 queue sets", nicWithQueues("enp5s0f4d1", "cxgb4", bus, dev, 2),
			named("enp5s0f4d1 (queue 0)", "enp5s0f4d1 (queue 1)"), "100:combined-0(cxgb) 101:combined-1(cxgb)"},
		{"Azure MANA", nicWithQueues("enP30832s1", "mana", bus, dev, 1),
			named("mana_hwc@pci:"+bus, "mana_q0@pci:"+bus), "101:combined-0(mana) other:100"},
		{"r8169: the only vector of a single-queue NIC", nicWithQueues("enp3s0", "r8169", bus, dev, 1),
			named("enp3s0"), "100:combined-0(if-only)"},
		{"mlx4 EQ names without pci:", nicWithQueues("eth2", "mlx4_en", bus, dev, 1),
			named("mlx4-async@pci:"+bus, "mlx4-3@"+bus, "eth2-0"), "102:combined-0(if-n) other:100 other:101"},
		{"ixgbe/igb/igc TxRx and misc", nicWithQueues("eno1", "igb", bus, dev, 2),
			named("eno1", "eno1-TxRx-0", "eno1-TxRx-1"),
			"101:combined-0(if-txrx) 102:combined-1(if-txrx) other:100"},
		{"i40e", nicWithQueues("ens2", "i40e", bus, dev, 1),
			named("i40e-"+bus+":misc", "i40e-ens2-TxRx-0"), "101:combined-0(driver-if-txrx) other:100"},
		{"i40e with its flow director vector", nicWithQueues("eth0", "i40e", bus, dev, 1),
			named("i40e-"+bus+":misc", "i40e-eth0-TxRx-0", "i40e-"+bus+":fdir-TxRx-0"),
			"101:combined-0(driver-if-txrx) other:100 other:102"},
		{"ice with the control VSI", nicWithQueues("lan1", "ice", bus, dev, 1),
			named("ice-"+bus+":misc", "ice-"+bus+":ctrl-TxRx-0", "ice-lan1-TxRx-0"),
			"102:combined-0(driver-if-txrx) other:100 other:101"},
		{"bnxt_en", nicWithQueues("ens3f0np0", "bnxt_en", bus, dev, 1),
			named("ens3f0np0-TxRx-0"), "100:combined-0(if-txrx)"},
		{"ena both spellings", nicWithQueues("eth0", "ena", bus, dev, 2),
			named("ena-mgmnt@pci:"+bus, "eth0-Tx-Rx-0", "ena-TxRx-1@pci:"+bus),
			"101:combined-0(ena) 102:combined-1(ena) other:100"},
		{"hinic with its event queues", nicWithQueues("enp25s0", "hinic", bus, dev, 1),
			named("hinic_aeq0@pci:"+bus, "enp25s0_qp0"), "101:combined-0(hinic) other:100"},
		{"hns3 with the hclge misc vector", nicWithQueues("enp125s0f0", "hns3", bus, dev, 2),
			named("hclge-misc-"+bus, "hns3-"+bus+"-TxRx-0", "hns3-"+bus+"-TxRx-2"),
			"101:combined-0(hns3) 102:combined-1(hns3) other:100"},
		{"vmxnet3 buddy-share", nicWithQueues("ens192", "vmxnet3", bus, dev, 2),
			named("ens192-rxtx-0", "ens192-rxtx-1", "ens192-event-2"),
			"100:combined-0(if-rxtx) 101:combined-1(if-rxtx) other:102"},
		{"vmxnet3 without buddy-share: rx vectors after the tx ones", nicWithQueues("ens192", "vmxnet3", bus, dev, 2),
			named("ens192-tx-0", "ens192-tx-1", "ens192-rx-2", "ens192-rx-3", "ens192-event-4"),
			"100:tx-0(if-tx) 101:tx-1(if-tx) 102:rx-0(if-rx) 103:rx-1(if-rx) other:104"},
		{"gve: first half tx, second half rx", nicWithQueues("ens4", "gve", bus, dev, 2),
			named("gve-mgmnt@pci:"+bus, "gve-ntfy-blk0@pci:"+bus, "gve-ntfy-blk1@pci:"+bus, "gve-ntfy-blk2@pci:"+bus, "gve-ntfy-blk3@pci:"+bus),
			"101:tx-0(gve) 102:tx-1(gve) 103:rx-0(gve) 104:rx-1(gve) other:100"},
		{"gve before 1.4 (eth%d-ntfy-block.N) on the PCI column", nicWithQueues("ens4", "gve", bus, dev, 1),
			msix(bus, "eth%d-ntfy-block.0", "eth%d-ntfy-block.1"),
			"100:tx-0(gve) 101:rx-0(gve)"},
		{"virtio without a driver link: the device path says virtio", nicWithQueues("eth0", "", "0000:00:03.0", "/sys/devices/pci0000:00/0000:00:03.0/virtio1", 1),
			named("virtio1-config", "virtio1-input.0", "virtio1-output.0"),
			"101:rx-0(virtio) 102:tx-0(virtio) other:100"},
		// tg3 numbers its vectors: vector 0 serves link and tx-0 (or link
		// alone with TSS, IF-0), rx ring i is vector i+1.
		{"tg3 with RSS: tx on vector 0, rx rings on 1..4", nicWithQueues("eth0", "tg3", bus, dev, 4),
			named("eth0-tx-0", "eth0-rx-1", "eth0-rx-2", "eth0-rx-3", "eth0-rx-4"),
			"100:tx-0(if-tx) 101:rx-0(tg3) 102:rx-1(tg3) 103:rx-2(tg3) 104:rx-3(tg3) noirq:tx-1,tx-2,tx-3"},
		{"tg3 with TSS: link on vector 0, queue pairs on 1..2", nicWithQueues("eth0", "tg3", bus, dev, 2),
			named("eth0-0", "eth0-txrx-1", "eth0-txrx-2"),
			"101:combined-0(tg3) 102:combined-1(tg3) other:100"},
		// bnxt_en before Linux 6.12 cut IRQ names to 17 characters.
		{"bnxt_en with names cut before the queue number", nicWithQueues("enp4s0f0np0", "bnxt_en", bus, dev, 3),
			msix(bus, "enp4s0f0np0-TxRx-", "enp4s0f0np0-TxRx-", "enp4s0f0np0-TxRx-"),
			"100:combined-0(bnxt-truncated) 101:combined-1(bnxt-truncated) 102:combined-2(bnxt-truncated)"},
		// A 10-character name: IF-TxRx-10 and IF-TxRx-11 were cut to
		// IF-TxRx-1, which the name rule reads as queue 1 three times.
		{"bnxt_en with 12 queues whose names 10 and 11 were cut", nicWithQueues("enp4s0f0np", "bnxt_en", bus, dev, 12),
			msix(bus, "enp4s0f0np-TxRx-0", "enp4s0f0np-TxRx-1", "enp4s0f0np-TxRx-2", "enp4s0f0np-TxRx-3", "enp4s0f0np-TxRx-4", "enp4s0f0np-TxRx-5",
				"enp4s0f0np-TxRx-6", "enp4s0f0np-TxRx-7", "enp4s0f0np-TxRx-8", "enp4s0f0np-TxRx-9", "enp4s0f0np-TxRx-1", "enp4s0f0np-TxRx-1"),
			"100:combined-0(bnxt-truncated) 101:combined-1(bnxt-truncated) 102:combined-2(bnxt-truncated) 103:combined-3(bnxt-truncated) " +
				"104:combined-4(bnxt-truncated) 105:combined-5(bnxt-truncated) 106:combined-6(bnxt-truncated) 107:combined-7(bnxt-truncated) " +
				"108:combined-8(bnxt-truncated) 109:combined-9(bnxt-truncated) 110:combined-10(bnxt-truncated) 111:combined-11(bnxt-truncated)"},
		{"bnxt_en with names that fit", nicWithQueues("ens1f0np0", "bnxt_en", bus, dev, 2),
			named("ens1f0np0-TxRx-0", "ens1f0np0-TxRx-1"), "100:combined-0(if-txrx) 101:combined-1(if-txrx)"},
		// atlantic names every ring vector after the interface.
		{"atlantic: the IRQs named IF are the rings in vector order", nicWithQueues("enp1s0", "atlantic", bus, dev, 2),
			msix(bus, "enp1s0", "enp1s0", "enp1s0"),
			"100:combined-0(atlantic) 101:combined-1(atlantic) other:102"},
		// xen-netfront names split event channels after the xenbus device
		// (vif-0), not the interface; unsplit, the one channel is eth0.
		{"xen-netfront split event channels", nicWithQueues("eth0", "vif", "", "/sys/devices/vif-0", 2),
			named("vif0-q0-tx", "vif0-q0-rx", "vif0-q1-tx", "vif0-q1-rx", "vif1-q0-rx", "vif0.0-q0-rx"),
			"100:tx-0(xen-netfront) 101:rx-0(xen-netfront) 102:tx-1(xen-netfront) 103:rx-1(xen-netfront)"},
		{"xen-netfront single unsplit channel", nicWithQueues("eth0", "vif", "", "/sys/devices/vif-0", 1),
			named("xenbus", "blkif", "eth0"), "102:combined-0(if-only)"},
		{"ENA vectors with no action name are the NIC's by the PCI column", nicWithQueues("enp39s0", "ena", bus, dev, 2),
			msix(bus, "ena-mgmnt@pci:"+bus, "enp39s0-Tx-Rx-0", ""),
			"101:combined-0(ena) other:100 unmapped:102 noirq:rx-1,tx-1"},
		{"stmmac per-queue vectors: IF:rx-N, IF:tx-N, and IF:mac beside them", nicWithQueues("eth0", "intel-eth-pci", bus, dev, 2),
			named("eth0:mac", "eth0:rx-0", "eth0:tx-0", "eth0:rx-1", "eth0:tx-1", "eth0:safety-ue"),
			"101:rx-0(stmmac) 102:tx-0(stmmac) 103:rx-1(stmmac) 104:tx-1(stmmac) other:100 other:105"},
		{"enetc IF-rxtxN", nicWithQueues("eno0", "fsl_enetc", bus, dev, 2),
			msix(bus, "eno0-rxtx0", "eno0-rxtx1"), "100:combined-0(enetc) 101:combined-1(enetc)"},
		{"iavf with its mailbox vector", nicWithQueues("ens1f1v0", "iavf", bus, dev, 1),
			named("iavf-"+bus+":mbx", "iavf-ens1f1v0-TxRx-0"), "101:combined-0(driver-if-txrx) other:100"},
		// Two VFs called net1 in two network namespaces: the vectors the
		// NIC's function owns are its own, the other VF's are dropped.
		{"two interfaces of one name: the owned vector is the NIC's", nicWithQueues("net1", "iavf", bus, dev, 1),
			append(msix(bus, "iavf-net1-TxRx-0"), irqLine{n: 200, name: "iavf-net1-TxRx-0"}),
			"100:combined-0(driver-if-txrx)"},
		{"two interfaces of one name, no evidence: neither is taken", nicWithQueues("net1", "iavf", bus, dev, 1),
			named("iavf-net1-TxRx-0", "iavf-net1-TxRx-0"),
			"unmapped:100 unmapped:101 noirq:rx-0,tx-0"},
		{"two interfaces of one name beside a misc vector: the misc vector stays misc", nicWithQueues("eth0", "ixgbevf", bus, dev, 1),
			named("eth0", "eth0-TxRx-0", "eth0-TxRx-0"),
			"other:100 unmapped:101 unmapped:102 noirq:rx-0,tx-0"},
		{"idpf numbered by vector index, with its mailbox vector on the PCI column", nicWithQueues("eth1", "idpf", bus, dev, 3),
			msix(bus, "idpf-Mailbox-0", "idpf-eth1-TxRx-1", "idpf-eth1-TxRx-3", "idpf-eth1-Rx-4"),
			"101:combined-0(idpf) 102:combined-1(idpf) 103:rx-2(idpf) other:100 noirq:tx-2"},
		{"idpf names of two interfaces of one name: not ranked into distinct queues", nicWithQueues("net1", "idpf", bus, dev, 2),
			named("idpf-net1-TxRx-1", "idpf-net1-TxRx-1"), "unmapped:100 unmapped:101 noirq:rx-0,rx-1,tx-0,tx-1"},
		{"ThunderX nicvf completion, buffer-ring and error vectors", nicWithQueues("enp5s0f1", "thunder-nicvf", bus, dev, 1),
			named("enp5s0f1-rxtx-0", "enp5s0f1-rbdr-0", "enp5s0f1-qset-err-0"), "100:combined-0(if-rxtx) other:101 other:102"},
		{"unknown names, one vector per queue: vector order", nicWithQueues("eth9", "foo", bus, dev, 2),
			msix(bus, "foo-a", "foo-b"), "100:combined-0(order) 101:combined-1(order)"},
		{"unknown names, vectors and queues differ: reported", nicWithQueues("eth9", "foo", bus, dev, 2),
			msix(bus, "foo-a", "foo-b", "foo-c"), "unmapped:100 unmapped:101 unmapped:102 noirq:rx-0,rx-1,tx-0,tx-1"},
		{"x86 MSI hwirq names the PCI function", nicWithQueues("eth9", "foo", "0000:65:00.1", "/sys/devices/x/0000:65:00.1", 1),
			[]irqLine{{n: 77, chip: "IR-PCI-MSI", hwirq: "52955137", name: "foo-q"}, {n: 66, chip: "IR-PCI-MSI", hwirq: "52953105", name: "bar-q"}},
			"77:combined-0(order)"},
	}
	for _, tt := range tests {
		t.Run(tt.family, func(t *testing.T) {
			mapNIC(tt.nic, evidenceOf(tt.irqs...), irqRules, false)
			if got := mapping(tt.nic); got != tt.want {
				t.Errorf("mapping\n got  %s\n want %s", got, tt.want)
			}
			for _, m := range tt.nic.QueueIRQs {
				if m.How == "" {
					t.Errorf("IRQ %d: no how", m.IRQ)
				}
			}
			for _, m := range append(tt.nic.OtherIRQs, tt.nic.UnmappedIRQs...) {
				if m.Why == "" {
					t.Errorf("IRQ %d: no why", m.IRQ)
				}
			}
		})
	}
}

func TestMSISource(t *testing.T) {
	tests := []struct {
		chip, hwirq string
		bus         string
		index       int
	}{
		{"PCI-MSIX-0000:27:00.0", "3", "0000:27:00.0", 3},
		{"IR-PCI-MSI", "52955137", "0000:65:00.1", 1},
		{"PCI-MSI", "134463489", "0001:00:0f.0", 1},
		{"PCI-MSI", "65538", "0000:00:04.0", 2},
		{"ITS-MSI", "13107200", "", -1},
		{"ITS-PCI-MSIX-0002:00:00.0", "1", "0002:00:00.0", 1},
		{"PCI-MSI-X", "", "", -1},
	}
	for _, tt := range tests {
		bus, idx, _ := msiSource(&IRQ{Chip: tt.chip, HWIRQ: tt.hwirq})
		if bus != tt.bus || idx != tt.index {
			t.Errorf("msiSource(%s %s) = %s %d, want %s %d", tt.chip, tt.hwirq, bus, idx, tt.bus, tt.index)
		}
	}
}

// mlx4's two ports share a PCI function: each maps its own vectors and
// leaves the other's unreported.
func TestMatcherSharedFunction(t *testing.T) {
	const bus = "0000:04:00.0"
	ev := evidenceOf(msix(bus, "mlx4-async@pci:"+bus, "eth2-0", "eth3-0", "mystery")...)
	ev.nics = []string{"eth2", "eth3"}
	for name, want := range map[string]string{
		"eth2": "101:combined-0(if-n) other:100 unmapped:103",
		"eth3": "102:combined-0(if-n) other:100 unmapped:103",
	} {
		n := nicWithQueues(name, "mlx4_en", bus, "/sys/devices/pci0000:00/"+bus, 1)
		mapNIC(n, ev, irqRules, false)
		if got := mapping(n); got != want {
			t.Errorf("%s:\n got  %s\n want %s", name, got, want)
		}
	}
}

// Chelsio's ports share one PCI function and name their vectors
// "IF (queue N)": each port maps its own and leaves the other's alone.
func TestMatcherSharedFunctionSpaceNames(t *testing.T) {
	const bus = "0000:05:00.4"
	ev := evidenceOf(msix(bus, "enp5s0f4 (queue 0)", "enp5s0f4d1 (queue 0)")...)
	ev.nics = []string{"enp5s0f4", "enp5s0f4d1"}
	for name, want := range map[string]string{
		"enp5s0f4":   "100:combined-0(cxgb)",
		"enp5s0f4d1": "101:combined-0(cxgb)",
	} {
		n := nicWithQueues(name, "cxgb4", bus, "/sys/devices/pci0000:00/"+bus, 1)
		mapNIC(n, ev, irqRules, false)
		if got := mapping(n); got != want {
			t.Errorf("%s:\n got  %s\n want %s", name, got, want)
		}
	}
}

// An IRQ whose /proc/interrupts line has no name is named by its action
// directory in /proc/irq/N.
func TestMatcherActionDirs(t *testing.T) {
	const bus = "0000:27:00.0"
	n := nicWithQueues("enp39s0", "ena", bus, "/sys/devices/pci0000:00/"+bus, 2)
	ev := evidenceOf(msix(bus, "ena-mgmnt@pci:"+bus, "enp39s0-Tx-Rx-0", "")...)
	ev.actions = func(irq int) []string {
		if irq == 102 {
			return []string{"enp39s0-Tx-Rx-1"}
		}
		return nil
	}
	mapNIC(n, ev, irqRules, false)
	if got, want := mapping(n), "101:combined-0(ena) 102:combined-1(ena) other:100"; got != want {
		t.Fatalf("mapping\n got  %s\n want %s", got, want)
	}
	if how := n.QueueIRQs[1].How; !strings.Contains(how, "action directory") || !strings.Contains(how, "PCI column") {
		t.Errorf("how %q", how)
	}
}

// affinity_hint is evidence, not a numbering: distinct one-CPU hints say
// the vectors a vector-order mapping took are distinct queues; shared or
// missing hints are said, and the order stays the vectors'.
func TestMatcherAffinityHint(t *testing.T) {
	const bus = "0000:3b:00.0"
	one := func(cpu int) *CPUSet { s := NewCPUSet(cpu); return &s }
	for _, tt := range []struct {
		name  string
		hints map[int]*CPUSet
		how   string
	}{
		{"distinct", map[int]*CPUSet{100: one(20), 101: one(0)}, "affinity_hint gives each a CPU of its own (20,0)"},
		{"shared", map[int]*CPUSet{100: one(3), 101: one(3)}, "affinity_hint does not tell the vectors apart (3 3)"},
		{"none", nil, "for 2 queues"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := nicWithQueues("eth9", "foo", bus, "/sys/devices/pci0000:3a/"+bus, 2, 100, 101)
			ev := evidenceOf(named("foo-a", "foo-b")...)
			ev.hint = func(irq int) *CPUSet { return tt.hints[irq] }
			mapNIC(n, ev, irqRules, false)
			if got, want := mapping(n), "100:combined-0(order) 101:combined-1(order)"; got != want {
				t.Fatalf("mapping\n got  %s\n want %s", got, want)
			}
			if how := n.QueueIRQs[0].How; !strings.HasSuffix(how, tt.how) {
				t.Errorf("how %q, want it to end in %q", how, tt.how)
			}
		})
	}
}

// A tree's affinity_hint files reach the NIC's IRQs (an all-zero mask is
// no hint) and inspect's queue table.
func TestReadAffinityHint(t *testing.T) {
	dir := testutil.CopyTree(t, filepath.Join(hostsDir, "netutils-qlcnic-2socket"))
	for irq, mask := range map[int]string{88: "00000000,00000000,00000004", 89: "00000000,00000000,00000000"} {
		p := filepath.Join(dir, "proc", "irq", strconv.Itoa(irq))
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "affinity_hint"), []byte(mask+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Read(fs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h := s.Interrupts.IRQ(88).Hint; h == nil || h.List() != "2" {
		t.Errorf("IRQ 88 hint %v, want 2", h)
	}
	if h := s.Interrupts.IRQ(89).Hint; h != nil {
		t.Errorf("IRQ 89 hint %v, want none (all-zero mask)", h)
	}
	var b bytes.Buffer
	if err := WriteSummary(&b, s); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^\s+rx-0\s+88\s+eth0-rx-0\s+2\s`).Match(b.Bytes()) {
		t.Errorf("summary has no hint column for IRQ 88:\n%s", b.String())
	}
}

// enetc deals its tx rings over the vectors in turn: an LS1028A port with
// 2 vectors and 8 tx rings has tx-2..tx-7 served by vectors 0 and 1, not
// left without an IRQ (enetc_alloc_msix).
func TestMatcherEnetcTxRoundRobin(t *testing.T) {
	const bus = "0000:00:00.0"
	n := nicWithQueues("eno0", "fsl_enetc", bus, "/sys/devices/pci0000:00/"+bus, 2)
	for q := 2; q < 8; q++ {
		n.TxQueues = append(n.TxQueues, TxQueue{Index: q})
	}
	mapNIC(n, evidenceOf(msix(bus, "eno0-rxtx0", "eno0-rxtx1")...), irqRules, false)
	if got := mapping(n); got != "100:combined-0(enetc) 101:combined-1(enetc)" {
		t.Fatalf("mapping %s", got)
	}
	for i, want := range [][]int{{2, 4, 6}, {3, 5, 7}} {
		if m := n.QueueIRQs[i]; !slices.Equal(m.AlsoTx, want) || !strings.Contains(m.How, "tx ring t on vector t mod 2") {
			t.Errorf("vector %d serves also tx %v (%s), want %v", i, m.AlsoTx, m.How, want)
		}
	}
	for _, q := range n.TxQueues {
		if len(q.IRQs) != 1 || q.IRQs[0] != 100+q.Index%2 {
			t.Errorf("tx-%d IRQs %v, want [%d]", q.Index, q.IRQs, 100+q.Index%2)
		}
	}
}
