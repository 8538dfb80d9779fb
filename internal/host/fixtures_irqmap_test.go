package host

import (
	"strings"
	"testing"

	"redline/internal/testutil/hostgen"
)

// Every tree built from a real capture (testdata/hosts/*/SOURCE cites
// each) maps each NIC's queues to the IRQs the capture shows, by the
// evidence the capture has: the PCI column (6.2+), the requester ID in the
// x86 MSI hwirq, or the names alone (old kernels, Xen event channels,
// Hyper-V's MSI domain). A tree added to hostgen.Captures needs a row.
func TestCapturedTreesQueueIRQs(t *testing.T) {
	tests := []struct {
		tree, nic string
		by        string // "PCI column", "MSI hwirq" or "name": which evidence made the IRQs the NIC's
		want      string // mapping(): irq:kind-queue(rule), other:irq, unmapped:irq, noirq:queues
	}{
		{"aws-ena-pcimsix", "enp39s0", "PCI column",
			"66:combined-0(ena) other:65 unmapped:67 unmapped:68 unmapped:69 noirq:rx-1,rx-2,rx-3,tx-1,tx-2,tx-3"},
		{"azure-mana-4cpu", "enP30832s1", "name",
			"25:combined-0(mana) 26:combined-1(mana) 27:combined-2(mana) 28:combined-3(mana)"},
		{"chelsio-cxgb4-2port", "enp5s0f4", "MSI hwirq",
			"39:combined-0(cxgb) 40:combined-1(cxgb) 41:combined-2(cxgb) 42:combined-3(cxgb)"},
		{"chelsio-cxgb4-2port", "enp5s0f4d1", "MSI hwirq",
			"75:combined-11(cxgb) 76:combined-12(cxgb) 77:combined-13(cxgb) 78:combined-14(cxgb) noirq:rx-0,rx-1,rx-2,rx-3,rx-4,rx-5,rx-6,rx-7,rx-8,rx-9,rx-10,tx-0,tx-1,tx-2,tx-3,tx-4,tx-5,tx-6,tx-7,tx-8,tx-9,tx-10"},
		{"gce-gve", "ens4", "MSI hwirq",
			"24:tx-0(gve) 25:rx-0(gve) other:26"},
		{"intel-i40e-guest", "enP1s15", "MSI hwirq",
			"10:combined-0(driver-if-txrx) 11:combined-1(driver-if-txrx) 12:combined-2(driver-if-txrx) other:9"},
		{"intel-stmmac-4cpu", "eth0", "MSI hwirq",
			"131:rx-0(stmmac) 132:tx-0(stmmac) 133:rx-1(stmmac) 134:tx-1(stmmac) 135:rx-2(stmmac) 136:tx-2(stmmac) 137:rx-3(stmmac) 138:tx-3(stmmac) 139:rx-4(stmmac) 140:tx-4(stmmac) 141:rx-5(stmmac) 142:tx-5(stmmac) 143:rx-6(stmmac) 144:tx-6(stmmac) 145:rx-7(stmmac) 146:tx-7(stmmac) other:157"},
		{"nxp-enetc-imx95", "eth0", "PCI column",
			"123:combined-0(enetc) 124:combined-1(enetc) 125:combined-2(enetc) 126:combined-3(enetc) 127:combined-4(enetc) 128:combined-5(enetc)"},
		{"intel-ice-e810", "lan1", "MSI hwirq",
			"78:combined-0(driver-if-txrx) 79:combined-1(driver-if-txrx) 80:combined-2(driver-if-txrx) other:77"},
		{"kvm-virtio-nodriver", "eth0", "MSI hwirq",
			"41:rx-1(virtio) 42:tx-1(virtio) 43:rx-2(virtio) 44:tx-2(virtio) 45:rx-3(virtio) noirq:rx-0,tx-0,tx-3"},
		{"netutils-igb-ixgbe-2socket", "eth0", "name",
			"92:combined-0(if-txrx) 93:combined-1(if-txrx) 94:combined-2(if-txrx) 95:combined-3(if-txrx) 96:combined-4(if-txrx) 97:combined-5(if-txrx) 98:combined-6(if-txrx) 99:combined-7(if-txrx) other:91"},
		{"netutils-igb-ixgbe-2socket", "eth1", "name",
			"101:combined-0(if-txrx) 102:combined-1(if-txrx) 103:combined-2(if-txrx) 104:combined-3(if-txrx) 105:combined-4(if-txrx) 106:combined-5(if-txrx) 107:combined-6(if-txrx) 108:combined-7(if-txrx) other:100"},
		{"netutils-igb-ixgbe-2socket", "eth5", "name",
			"109:combined-0(if-txrx) 110:combined-1(if-txrx) 111:combined-2(if-txrx) 112:combined-3(if-txrx) 113:combined-4(if-txrx) 114:combined-5(if-txrx) 115:combined-6(if-txrx) 116:combined-7(if-txrx) 117:combined-8(if-txrx) 118:combined-9(if-txrx) 119:combined-10(if-txrx) 120:combined-11(if-txrx) 121:combined-12(if-txrx) 122:combined-13(if-txrx) 123:combined-14(if-txrx) 124:combined-15(if-txrx) 125:combined-16(if-txrx) 126:combined-17(if-txrx) 127:combined-18(if-txrx) 128:combined-19(if-txrx) 129:combined-20(if-txrx) 130:combined-21(if-txrx) 131:combined-22(if-txrx) 132:combined-23(if-txrx) 133:combined-24(if-txrx) 134:combined-25(if-txrx) 135:combined-26(if-txrx) 136:combined-27(if-txrx) 137:combined-28(if-txrx) 138:combined-29(if-txrx) 139:combined-30(if-txrx) 140:combined-31(if-txrx) other:141"},
		{"netutils-mlx4-bnx2-2socket", "eth0", "name",
			"77:combined-0(if-n) 78:combined-1(if-n) 79:combined-2(if-n) 80:combined-3(if-n) 81:combined-4(if-n) 82:combined-5(if-n) 83:combined-6(if-n) 84:combined-7(if-n)"},
		{"netutils-mlx4-bnx2-2socket", "eth1", "name",
			"86:combined-0(if-n) 87:combined-1(if-n) 88:combined-2(if-n) 89:combined-3(if-n) 90:combined-4(if-n) 91:combined-5(if-n) 92:combined-6(if-n) 93:combined-7(if-n)"},
		{"netutils-mlx4-bnx2-2socket", "eth2", "name",
			"64:combined-0(if-n) 65:combined-1(if-n) 66:combined-2(if-n) 67:combined-3(if-n) 68:combined-4(if-n) 69:combined-5(if-n) 70:combined-6(if-n) 71:combined-7(if-n) other:60 other:61 other:62 other:63"},
		{"netutils-mlx5-q6700", "enp1s0f0", "name",
			"30:combined-0(mlx5) 31:combined-1(mlx5) 32:combined-2(mlx5) 33:combined-3(mlx5) other:27 other:28 other:29"},
		{"netutils-mlx5-q6700", "enp1s0f1", "name",
			"37:combined-0(mlx5) 38:combined-1(mlx5) 39:combined-2(mlx5) 40:combined-3(mlx5) other:34 other:35 other:36"},
		{"netutils-qlcnic-2socket", "eth0", "name",
			"88:rx-0(if-rx) 89:rx-1(if-rx) 90:rx-2(if-rx) 91:rx-3(qlcnic)"},
		{"netutils-qlcnic-2socket", "eth1", "name",
			"93:rx-0(if-rx) 94:rx-1(if-rx) 95:rx-2(if-rx) 96:rx-3(qlcnic)"},
		{"netutils-e1000e-igb-2socket", "eth0", "name", "77:rx-0(if-rx) 78:tx-0(if-tx) other:79"},
		{"netutils-e1000e-igb-2socket", "eth1", "name", "80:rx-0(if-rx) 81:tx-0(if-tx) other:82"},
		{"netutils-e1000e-igb-2socket", "eth3", "name",
			"69:combined-0(if-txrx) 70:combined-1(if-txrx) 71:combined-2(if-txrx) 72:combined-3(if-txrx) 73:combined-4(if-txrx) 74:combined-5(if-txrx) 75:combined-6(if-txrx) 76:combined-7(if-txrx) other:68"},
		{"netutils-i40e-e1000e-e3", "eth0", "name",
			"33:combined-0(driver-if-txrx) 34:combined-1(driver-if-txrx) 35:combined-2(driver-if-txrx) 36:combined-3(driver-if-txrx) other:32 other:37"},
		{"netutils-i40e-e1000e-e3", "eth2", "name", "60:combined-0(if-only)"},
		{"netutils-i40e-e1000e-e3", "eth3", "name",
			"62:combined-0(if-txrx) 63:combined-1(if-txrx) 64:combined-2(if-txrx) 65:combined-3(if-txrx) other:61"},
		{"netutils-tg3-mlx4-2socket", "eth0", "name",
			"161:tx-0(if-tx) 162:rx-0(tg3) 163:rx-1(tg3) 164:rx-2(tg3) 165:rx-3(tg3)"},
		{"netutils-tg3-mlx4-2socket", "eth1", "name",
			"166:tx-0(if-tx) 167:rx-0(tg3) 168:rx-1(tg3) 169:rx-2(tg3) 170:rx-3(tg3)"},
		{"netutils-tg3-mlx4-2socket", "eth6", "name",
			"113:combined-0(if-n) 114:combined-1(if-n) 115:combined-2(if-n) 116:combined-3(if-n) 117:combined-4(if-n) 118:combined-5(if-n) 119:combined-6(if-n) 120:combined-7(if-n) other:109 other:110 other:111 other:112"},
		{"netutils-tg3-mlx4-2socket", "eth7", "name",
			"121:combined-0(if-n) 122:combined-1(if-n) 123:combined-2(if-n) 124:combined-3(if-n) 125:combined-4(if-n) 126:combined-5(if-n) 127:combined-6(if-n) 128:combined-7(if-n) other:109 other:110 other:111 other:112"},
		{"realtek-r8125-ifn", "eth0", "MSI hwirq",
			"30:combined-0(if-n) 31:combined-1(if-n) 32:combined-2(if-n) 33:combined-3(if-n)! 34:combined-4(if-n)! 35:combined-5(if-n)! 36:combined-6(if-n)!"},
		{"vmware-vmxnet3-8cpu", "eth0", "PCI column",
			"56:combined-0(if-rxtx) 57:combined-1(if-rxtx) 58:combined-2(if-rxtx) 59:combined-3(if-rxtx) 60:combined-4(if-rxtx) 61:combined-5(if-rxtx) 62:combined-6(if-rxtx) 63:combined-7(if-rxtx) other:64"},
		{"xen-netfront-1queue", "eth0", "name",
			"114:combined-0(if-only)"},
		{"xen-netfront-8queue", "eth0", "name",
			"100:tx-0(xen-netfront) 101:rx-0(xen-netfront) 102:tx-1(xen-netfront) 103:rx-1(xen-netfront) 104:tx-2(xen-netfront) 105:rx-2(xen-netfront) 106:tx-3(xen-netfront) 107:rx-3(xen-netfront) 108:tx-4(xen-netfront) 109:rx-4(xen-netfront) 110:tx-5(xen-netfront) 111:rx-5(xen-netfront) 112:tx-6(xen-netfront) 113:rx-6(xen-netfront) 114:tx-7(xen-netfront) 115:rx-7(xen-netfront)"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.tree] = true
		t.Run(tt.tree+"/"+tt.nic, func(t *testing.T) {
			s, _ := readFixture(t, tt.tree, Options{})
			n := s.NIC(tt.nic)
			if n == nil {
				t.Fatalf("no NIC %s", tt.nic)
			}
			if got := mapping(n); got != tt.want {
				t.Errorf("mapping\n got  %s\n want %s", got, tt.want)
			}
			for _, q := range n.QueueIRQs {
				byName := !strings.Contains(q.How, "; the NIC's by ")
				if tt.by == "name" && !byName || tt.by != "name" && !strings.Contains(q.How, "the NIC's by "+tt.by) {
					t.Errorf("IRQ %d: how %q, want the NIC's by %s", q.IRQ, q.How, tt.by)
				}
			}
		})
	}
	for name := range hostgen.Captures {
		if !seen[name] {
			t.Errorf("captured tree %s has no row here", name)
		}
	}
}
