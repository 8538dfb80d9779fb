package host

import (
	"fmt"
	"strings"
	"testing"
)

// The held-out check: real captures that are not fixture trees (most show
// only /proc/interrupts, some only IRQ names), run through the matcher's
// name-only path, as a reviewer holding nothing but a machine's
// /proc/interrupts would. Each case cites where the text comes from; the
// lines are the capture's, except that a header is added from the count
// columns where the capture has none, a web page's line numbering or
// markdown indentation is removed, a mail's wrapped lines are joined, and
// a PDF text layer's U+2010 hyphens are written as ASCII (each case says
// which). The NIC gets only what the capture
// shows: its name, and its driver and PCI address when the capture says
// them. No queue counts: every IRQ the names map is listed.
func TestMatcherHeldOutCaptures(t *testing.T) {
	for _, tt := range heldOutCaptures {
		t.Run(tt.name, func(t *testing.T) {
			ev := evidenceOf(tt.irqs...)
			if tt.text != "" {
				in, err := parseInterrupts([]byte(withHeader(tt.text)))
				if err != nil {
					t.Fatalf("%s: %v", tt.source, err)
				}
				ev = irqEvidence{in: &in}
			}
			n := &NIC{Name: tt.ifname, Driver: tt.driver, PCIAddress: tt.bus}
			mapNIC(n, ev, irqRules, false)
			// No queue directories: every mapped IRQ is "without a queue".
			if got := strings.ReplaceAll(mapping(n), "!", ""); got != tt.want {
				t.Errorf("%s\n got  %s\n want %s", tt.source, got, tt.want)
			}
		})
	}
}

// heldOutCapture is one real capture the matcher was not written from.
type heldOutCapture struct {
	name, source string
	text         string    // /proc/interrupts lines
	irqs         []irqLine // or names only
	ifname       string
	driver, bus  string
	want         string
}

var heldOutCaptures = []heldOutCapture{
	{
		name:   "hns3 on Kunpeng 920: each function's TxRx-0",
		source: "openeuler-mirror/wayca-scheduler README.en.md @2bc43f02e84a8c584f121cb5a8ab87f503c9e758 (2020-12-06), `wayca-irqdump hns3` (IRQ, hwirq, name of /proc/interrupts)",
		irqs: []irqLine{
			{n: 199, chip: "ITS-MSI", hwirq: "65536001", name: "hns3-0000:7d:00.0-TxRx-0"},
			{n: 329, chip: "ITS-MSI", hwirq: "65538049", name: "hns3-0000:7d:00.1-TxRx-0"},
			{n: 394, chip: "ITS-MSI", hwirq: "65540097", name: "hns3-0000:7d:00.2-TxRx-0"},
			{n: 524, chip: "ITS-MSI", hwirq: "65542145", name: "hns3-0000:7d:00.3-TxRx-0"},
			{n: 589, chip: "ITS-MSI", hwirq: "99090433", name: "hns3-0000:bd:00.0-TxRx-0"},
		},
		ifname: "enp125s0f1", driver: "hns3", bus: "0000:7d:00.1",
		want: "329:combined-0(hns3)",
	},
	{
		name:   "MANA, the first reading (mana_q3's line is wrapped in the mail and left out)",
		source: "netdev/linux-hyperv, Shradha Gupta, Re: [PATCH] net :mana : Add per-cpu stats for MANA device, 2024-03-13, https://lore.kernel.org/all/20240314025720.GA13853@linuxonhyperv3.guj3yctzbm1etfxqx2vob5hsef.xx.internal.cloudapp.net/",
		text: ` 25:          1        103          0    2989138  Hyper-V PCIe MSI 4138200989697-edge      mana_q0@pci:7870:00:00.0
 26:          0          1    4005360          0  Hyper-V PCIe MSI 4138200989698-edge      mana_q1@pci:7870:00:00.0
 27:          0          0          1    2997584  Hyper-V PCIe MSI 4138200989699-edge      mana_q2@pci:7870:00:00.0`,
		ifname: "eth1", driver: "mana", bus: "7870:00:00.0",
		want: "25:combined-0(mana) 26:combined-1(mana) 27:combined-2(mana)",
	},
	{
		name:   "IF-N on a RHEL 5 kernel, CPUs 2-14 deleted from the columns",
		source: "serverfault.com question 254355, ethernet smp_affinity vs /proc/interrupts vs /sys/class/net/ethX/device, https://serverfault.com/questions/254355",
		text: `           CPU0       CPU1       CPU15
  0:  600299726          0          0    IO-APIC-edge  timer
  1:          3          0          0    IO-APIC-edge  i8042
  8:          1          0          0    IO-APIC-edge  rtc
  9:          0          0          0   IO-APIC-level  acpi
 12:          4          0          0    IO-APIC-edge  i8042
 50:          0          0          0   IO-APIC-level  uhci_hcd:usb6, uhci_hcd:usb8
 58:       6644      25103          0   IO-APIC-level  ioc0
 66:          0          0          0   IO-APIC-level  ata_piix
 74:        221     533830          0   IO-APIC-level  ata_piix
 98:         35          0    2902361       PCI-MSI-X  eth1-0
106:         61         11       3841       PCI-MSI-X  eth1-1
114:         28          0      61452       PCI-MSI-X  eth1-2
122:         24       1586         22       PCI-MSI-X  eth1-3
130:       2912          0        337       PCI-MSI-X  eth1-4
138:         21          0         28       PCI-MSI-X  eth1-5
146:         21          0         56       PCI-MSI-X  eth1-6
154:         34          1          1       PCI-MSI-X  eth1-7
209:         23          0          0   IO-APIC-level  ehci_hcd:usb1
217:          0          0          0   IO-APIC-level  ehci_hcd:usb2, uhci_hcd:usb5, uhci_hcd:usb7
225:          0          0          0   IO-APIC-level  uhci_hcd:usb3
233:          0          0          0   IO-APIC-level  uhci_hcd:usb4
NMI:       7615       2989       2931
LOC:  600328144  600328099  600327086
ERR:          0
MIS:          0`,
		ifname: "eth1",
		want:   "98:combined-0(if-n) 106:combined-1(if-n) 114:combined-2(if-n) 122:combined-3(if-n) 130:combined-4(if-n) 138:combined-5(if-n) 146:combined-6(if-n) 154:combined-7(if-n)",
	},
	{
		name:   "separate rx and tx vectors and a misc vector",
		source: "ntop/PF_RING issue #24 (Skryabind, 2015-07-20), https://github.com/ntop/PF_RING/issues/24",
		text: `          CPU0       CPU1       CPU2       CPU3
68:          1          0          0          0   PCI-MSI-edge      eth5
69:         70          0      14741          0   PCI-MSI-edge      eth5-rx-0
70:         43          0          0      10025   PCI-MSI-edge      eth5-rx-1
71:       4281          0          0          0   PCI-MSI-edge      eth5-rx-2
72:         22       9845          0          0   PCI-MSI-edge      eth5-rx-3
73:         12          0       2982          0   PCI-MSI-edge      eth5-tx-0
74:         29          0          0       3073   PCI-MSI-edge      eth5-tx-1
75:       1431          0          0          0   PCI-MSI-edge      eth5-tx-2
76:         16       5196          0          0   PCI-MSI-edge      eth5-tx-3
77:       1234          0          0          0   PCI-MSI-edge      eth9`,
		ifname: "eth5",
		want:   "69:rx-0(if-rx) 70:rx-1(if-rx) 71:rx-2(if-rx) 72:rx-3(if-rx) 73:tx-0(if-tx) 74:tx-1(if-tx) 75:tx-2(if-tx) 76:tx-3(if-tx) other:68",
	},
	{
		name:   "RISC-V board: PLIC chip of two words, IF-N vectors with Edge after the hwirq",
		source: "orangepi-xunlong/openwrt issue #46 (peterwillcn, 2025-07-21), https://github.com/orangepi-xunlong/openwrt/issues/46",
		text: `26:   27389481          0          0          0          0          0          0          0  SiFive PLIC 131 Edge      eth0
 27:    2682691          0          0          0          0          0          0          0  SiFive PLIC 133 Edge      eth1
 38:   16876872          0          0          0          0          0          0          0   PCI-MSI 134742016 Edge      eth2-0
 39:          0          0          0          0          0          0          0          0   PCI-MSI 134742017 Edge      eth2-1
 40:          0          0          0          0          0          0          0          0   PCI-MSI 134742018 Edge      eth2-2
 41:          0          0          0          0          0          0          0          0   PCI-MSI 134742019 Edge      eth2-3
 42:          0          0          0          0          0          0          0          0   PCI-MSI 134742020 Edge      eth2-4
 43:          0          0          0          0          0          0          0          0   PCI-MSI 134742021 Edge      eth2-5
 44:          0          0          0          0          0          0          0          0   PCI-MSI 134742022 Edge      eth2-6
 45:          0          0          0          0          0          0          0          0   PCI-MSI 134742023 Edge      eth2-7`,
		ifname: "eth2",
		want:   "38:combined-0(if-n) 39:combined-1(if-n) 40:combined-2(if-n) 41:combined-3(if-n) 42:combined-4(if-n) 43:combined-5(if-n) 44:combined-6(if-n) 45:combined-7(if-n)",
	},
	{
		name:   "ixgbevf on an EC2 Xen guest (ethtool -i in the same gist: driver ixgbevf, bus-info 0000:00:03.0)",
		source: "gist limitusus/d85fd5495c4612deadc8 (2016-01-28), https://gist.github.com/limitusus/d85fd5495c4612deadc8 (spacing as the page shows it)",
		text: `CPU0 CPU1
48: 1803 0 PCI-MSI-edge eth0-TxRx-0
49: 2668 0 PCI-MSI-edge eth0-TxRx-1
50: 20 0 PCI-MSI-edge eth0
924: 2097 3024 xen-dyn-event blkif
925: 130 0 xen-dyn-event xenbus`,
		ifname: "eth0", driver: "ixgbevf", bus: "0000:00:03.0",
		want: "48:combined-0(if-txrx) 49:combined-1(if-txrx) other:50",
	},
	{
		name:   "IF-TxRx-N with the misc vector first, hwirq naming the function",
		source: "pastebin GBC4Suw7 (2020-08-11), https://pastebin.com/GBC4Suw7 (spacing as the page shows it)",
		text: `35: 0 0 13 0 0 0 0 0 IR-PCI-MSI 2097152-edge enp4s0f0
36: 0 0 0 29917 0 0 0 0 IR-PCI-MSI 2097153-edge enp4s0f0-TxRx-0
37: 0 0 0 0 22026 0 0 0 IR-PCI-MSI 2097154-edge enp4s0f0-TxRx-1
38: 0 0 0 0 0 36709 0 0 IR-PCI-MSI 2097155-edge enp4s0f0-TxRx-2
39: 0 0 0 0 0 0 82338 0 IR-PCI-MSI 2097156-edge enp4s0f0-TxRx-3
40: 0 0 0 0 0 0 0 21297 IR-PCI-MSI 2097157-edge enp4s0f0-TxRx-4
41: 116421 0 0 0 0 0 0 0 IR-PCI-MSI 2097158-edge enp4s0f0-TxRx-5
42: 0 17408 0 0 0 0 0 0 IR-PCI-MSI 2097159-edge enp4s0f0-TxRx-6
43: 0 0 37281 0 0 0 0 0 IR-PCI-MSI 2097160-edge enp4s0f0-TxRx-7`,
		ifname: "enp4s0f0",
		want:   "36:combined-0(if-txrx) 37:combined-1(if-txrx) 38:combined-2(if-txrx) 39:combined-3(if-txrx) 40:combined-4(if-txrx) 41:combined-5(if-txrx) 42:combined-6(if-txrx) 43:combined-7(if-txrx) other:35",
	},
	{
		name:   "four NICs with IF-N vectors: each keeps its own",
		source: "pastebin ZJxciqPa, https://pastebin.com/ZJxciqPa (spacing as the page shows it)",
		text: `35: 2383338155 0 0 569515840 0 0 PCI-MSI-edge eth0-0
36: 981148 1272120280 0 0 0 0 PCI-MSI-edge eth0-1
37: 1098619 0 1314283479 0 0 0 PCI-MSI-edge eth0-2
38: 1009638 0 0 1108948780 0 0 PCI-MSI-edge eth0-3
39: 630523 0 0 0 3586170491 0 PCI-MSI-edge eth0-4
40: 497819 0 0 0 0 3497876852 PCI-MSI-edge eth0-5
41: 3564564607 0 0 0 0 0 PCI-MSI-edge eth0-6
43: 766315 0 0 569477687 2382260439 0 PCI-MSI-edge eth1-0
44: 962318 1325777657 0 0 0 0 PCI-MSI-edge eth1-1
45: 1142049 0 1317376467 0 0 0 PCI-MSI-edge eth1-2
46: 965603 0 0 1126448272 0 0 PCI-MSI-edge eth1-3
47: 225076 0 0 0 3587813493 0 PCI-MSI-edge eth1-4
48: 335364 0 0 0 0 3568357567 PCI-MSI-edge eth1-5
49: 3543087754 0 0 0 0 0 PCI-MSI-edge eth1-6`,
		ifname: "eth1",
		want:   "43:combined-0(if-n) 44:combined-1(if-n) 45:combined-2(if-n) 46:combined-3(if-n) 47:combined-4(if-n) 48:combined-5(if-n) 49:combined-6(if-n)",
	},
	{
		name:   "Xen dom0: Phys-irq chip, rx vectors numbered down, one tx vector",
		source: "pastebin wG8WTsqN, https://pastebin.com/wG8WTsqN (spacing as the page shows it)",
		text: `CPU0 CPU1 CPU2 CPU3 CPU4 CPU5 CPU6 CPU7 CPU8 CPU9 CPU10 CPU11 CPU12 CPU13 CPU14 CPU15
234: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 Phys-irq eth1
235: 2875338 3856 2292 0 0 0 0 0 0 0 0 10 0 7 0 0 Phys-irq eth1-rx-3
236: 2198095 3563 2208 0 0 0 0 9 0 0 0 5 0 0 0 30 Phys-irq eth1-rx-2
237: 4457365 4839 5666 0 0 0 0 0 7 0 0 0 6 0 0 0 Phys-irq eth1-rx-1
238: 2954504 4575 2882 0 0 0 0 0 0 0 6 0 0 0 5 0 Phys-irq eth1-rx-0
239: 1954275 3481 2815 0 0 0 0 0 0 0 0 0 0 0 0 10 Phys-irq eth1-tx-0
240: 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 Phys-irq peth0
241: 82166150 2627527 44572 0 0 0 0 0 0 0 0 0 5 0 0 0 Phys-irq peth0-rx-3
242: 82356422 979078 42120 0 0 0 0 0 0 0 0 0 0 0 9 0 Phys-irq peth0-rx-2
243: 98089996 101392 30283 0 0 0 0 0 0 0 0 0 0 11 0 0 Phys-irq peth0-rx-1`,
		ifname: "eth1",
		want:   "235:rx-3(if-rx) 236:rx-2(if-rx) 237:rx-1(if-rx) 238:rx-0(if-rx) 239:tx-0(if-tx) other:234",
	},
	{
		name:   "eno1 TxRx on 16 CPUs beside an unrelated PCI-named vector",
		source: "pastebin jqu6hrCS (2020-08-11), https://pastebin.com/jqu6hrCS (spacing as the page shows it)",
		text: `CPU0 CPU1 CPU2 CPU3 CPU4 CPU5 CPU6 CPU7 CPU8 CPU9 CPU10 CPU11 CPU12 CPU13 CPU14 CPU15
32: 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 IR-PCI-MSI-edge eno1
33: 48 0 0 0 0 0 0 723466589 0 0 0 0 0 0 0 0 IR-PCI-MSI-edge eno1-TxRx-0
34: 72 182597 382672 8911 1458 872 617840976 5080 0 0 0 0 0 0 0 0 IR-PCI-MSI-edge eno1-TxRx-1
35: 193 75547 715749672 48032 7997 4786 84050 18933 0 0 0 0 0 0 0 0 IR-PCI-MSI-edge eno1-TxRx-2
36: 62 180546 305521 13139 2617 719833391 158447 4721 0 0 0 0 0 0 0 0 IR-PCI-MSI-edge eno1-TxRx-3
37: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 IR-PCI-MSI-edge 0000:00:11.4`,
		ifname: "eno1",
		want:   "33:combined-0(if-txrx) 34:combined-1(if-txrx) 35:combined-2(if-txrx) 36:combined-3(if-txrx) other:32",
	},
	{
		name:   "vmxnet3 on a 46-vCPU ESXi guest, everything on CPU 0",
		source: "coreos/bugs issue #2135 (Eshakk, 2017-09-01), https://github.com/coreos/bugs/issues/2135 (the first line; the next is cut in the excerpt)",
		text:   ` 56:  271490338          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0   PCI-MSI 5767168-edge      ens192-rxtx-0`,
		ifname: "ens192", driver: "vmxnet3",
		want: "56:combined-0(if-rxtx)",
	},
	{
		name:   "atlantic: seven vectors all named after the interface, on 4 CPUs",
		source: "Aquantia/AQtion issue #31 (nemihome, 2021-10-20), RSS limit according to cores does not work, https://github.com/Aquantia/AQtion/issues/31",
		text: `            CPU0       CPU1       CPU2       CPU3       
 128:          0          0          0    1710005  IR-PCI-MSI 524288-edge      enp1s0
 129:    2216316          0          0          0  IR-PCI-MSI 524289-edge      enp1s0
 130:          0          0          0    3127524  IR-PCI-MSI 524290-edge      enp1s0
 131:          0    2855864          0          0  IR-PCI-MSI 524291-edge      enp1s0
 132:          0         17          0          0  IR-PCI-MSI 524292-edge      enp1s0
 133:          0          0          0          0  IR-PCI-MSI 524293-edge      enp1s0
 134:          0          0          0          0  IR-PCI-MSI 524294-edge      enp1s0`,
		ifname: "enp1s0", driver: "atlantic", bus: "0000:01:00.0",
		want: "128:combined-0(atlantic) 129:combined-1(atlantic) 130:combined-2(atlantic) 131:combined-3(atlantic) 132:combined-4(atlantic) 133:combined-5(atlantic) 134:combined-6(atlantic)",
	},
	{
		name:   "ixgbevf on an EC2 Xen guest: xen-pirq-msi-x chip",
		source: "scylladb/scylladb issue #1974 (vladzcloudius, 2017-01-05), https://github.com/scylladb/scylladb/issues/1974",
		text: `100:       1939          0          0          0          0          0          0          0  xen-pirq-msi-x     eth0-TxRx-0
101:       1559        340          0          0          0          0          0          0  xen-pirq-msi-x     eth0-TxRx-1
102:         16          0          0          0          0          0          0          0  xen-pirq-msi-x     eth0`,
		ifname: "eth0", driver: "ixgbevf",
		want: "100:combined-0(if-txrx) 101:combined-1(if-txrx) other:102",
	},
	{
		name:   "hv_netvsc on Azure: no IRQ of its own (VMBus channels are counted in the HYP row)",
		source: "chn-lee-yumi/blog-en content/post/2024/azure-b-series-high-softirq-cpu-credits/index.md (2024-11-07), an Azure B1s VM (its one NIC is hv_netvsc's: modelled)",
		text: `           CPU0
  4:    6042775   IO-APIC   4-edge      ttyS0
  8:          0   IO-APIC   8-edge      rtc0
  9:          0   IO-APIC   9-fasteoi   acpi
NMI:          0   Non-maskable interrupts
LOC:          0   Local timer interrupts
SPU:          0   Spurious interrupts
PMI:          0   Performance monitoring interrupts
IWI:          1   IRQ work interrupts
RTR:          0   APIC ICR read retries
RES:          0   Rescheduling interrupts
CAL:          0   Function call interrupts
TLB:          0   TLB shootdowns
HYP:  303764679   Hypervisor callback interrupts
HRE:          0   Hyper-V reenlightenment interrupts
HVS:  826460279   Hyper-V stimer0 interrupts
ERR:          0
MIS:          0
PIN:          0   Posted-interrupt notification event
NPI:          0   Nested posted-interrupt event
PIW:          0   Posted-interrupt wakeup event`,
		ifname: "eth0", driver: "hv_netvsc",
		want: "",
	},
	{
		name:   "stmmac on NXP S32G (GICv3 wired lines): IF:mac beside IF:rx-N and IF:tx-N",
		source: "netdev, Jan Petrous (NXP), [PATCH RFC 0/4] Support multi-channel IRQs in stmmac platform drivers, 2025-12-14 (Message-Id 20251214-dwmac_multi_irq-v1-0-36562ab0e9f7@oss.nxp.com), https://lore.kernel.org/netdev/20251214-dwmac_multi_irq-v1-0-36562ab0e9f7@oss.nxp.com/",
		text: ` 29:          0          0          0          0          0          0          0          0    GICv3  89 Level     eth0:mac
 30:          0          0          0          0          0          0          0          0    GICv3  91 Level     eth0:rx-0
 31:          0          0          0          0          0          0          0          0    GICv3  93 Level     eth0:rx-1
 32:          0          0          0          0          0          0          0          0    GICv3  95 Level     eth0:rx-2
 33:          0          0          0          0          0          0          0          0    GICv3  97 Level     eth0:rx-3
 34:          0          0          0          0          0          0          0          0    GICv3  99 Level     eth0:rx-4
 35:          0          0          0          0          0          0          0          0    GICv3  90 Level     eth0:tx-0
 36:          0          0          0          0          0          0          0          0    GICv3  92 Level     eth0:tx-1
 37:          0          0          0          0          0          0          0          0    GICv3  94 Level     eth0:tx-2
 38:          0          0          0          0          0          0          0          0    GICv3  96 Level     eth0:tx-3
 39:          0          0          0          0          0          0          0          0    GICv3  98 Level     eth0:tx-4`,
		ifname: "eth0",
		want:   "30:rx-0(stmmac) 31:rx-1(stmmac) 32:rx-2(stmmac) 33:rx-3(stmmac) 34:rx-4(stmmac) 35:tx-0(stmmac) 36:tx-1(stmmac) 37:tx-2(stmmac) 38:tx-3(stmmac) 39:tx-4(stmmac) other:29",
	},
	{
		name:   "ENETC on LS1028A (Xen dom0): ITS-MSI, IF-rxtxN",
		source: "xen-devel, Julien Grall, Re: AW: AW: AW: AW: Xen data from meta-virtualization layer, 2020-11-18 (Message-ID 5dc63ee2-f1ce-31fc-cb6a-fe4dae929fb3@xen.org), quoting Leo Krueger's /proc/interrupts (\"the on-board ethernet ports (fsl_enetc)\"), https://lore.kernel.org/xen-devel/5dc63ee2-f1ce-31fc-cb6a-fe4dae929fb3@xen.org/",
		text: `29:          0   ITS-MSI   1 Edge      gbe0-rxtx0
  32:          0   ITS-MSI 8192 Edge      ptp_qoriq`,
		ifname: "gbe0", driver: "fsl_enetc",
		want: "29:combined-0(enetc)",
	},
	{
		name:   "iavf VFs on CentOS 7: two VFs named net1 (each in its own namespace), each with its mailbox vector",
		source: "LKML, Chris Friesen, [IRQ] IRQ affinity not working properly?, 2021-01-29 (Message-ID a0d5551e-761b-1571-b8e1-5586ec4d9f3b@windriver.com), https://lore.kernel.org/lkml/a0d5551e-761b-1571-b8e1-5586ec4d9f3b@windriver.com/ (each line was wrapped in the mail and is joined here)",
		text: `              CPU0       CPU1       CPU2       CPU3 CPU4       CPU5
941:          0          0          0          0 28490          0 IR-PCI-MSI-edge iavf-0000:b5:03.6:mbx
942:          0          0          0          0 333832         0 IR-PCI-MSI-edge      iavf-net1-TxRx-0
943:          0          0          0          0 300842         0 IR-PCI-MSI-edge      iavf-net1-TxRx-1
944:          0          0          0          0 333845         0 IR-PCI-MSI-edge      iavf-net1-TxRx-2
945:          0          0          0          0 333822         0 IR-PCI-MSI-edge      iavf-net1-TxRx-3
961:          0          0          0          0 28492         0 IR-PCI-MSI-edge iavf-0000:b5:02.7:mbx
962:          0          0          0          0 435608         0 IR-PCI-MSI-edge      iavf-net1-TxRx-0
963:          0          0          0          0 394832         0 IR-PCI-MSI-edge      iavf-net1-TxRx-1
964:          0          0          0          0 398414         0 IR-PCI-MSI-edge      iavf-net1-TxRx-2
965:          0          0          0          0 192847         0 IR-PCI-MSI-edge      iavf-net1-TxRx-3`,
		ifname: "net1", driver: "iavf", bus: "0000:b5:02.7",
		want: "other:961 unmapped:942 unmapped:943 unmapped:944 unmapped:945 unmapped:962 unmapped:963 unmapped:964 unmapped:965",
	},
	{
		name:   "idpf before its IRQ names followed the queues: numbered by the device's vector index",
		source: "stable, Greg Kroah-Hartman, [PATCH 6.12 180/265] idpf: change IRQ naming to match netdev and ethtool queue numbering (Brian Vazquez, upstream 1500a8662d2d), 2026-03-12, https://lore.kernel.org/stable/20260312201024.808442196@linuxfoundation.org/ (\"Before\": grep . /proc/irq/*/*idpf*/../smp_affinity_list after ethtool -L eth1 tx 1 combined 3; ethtool -S shows tx_q-3 on idpf-eth1-Tx-5)",
		irqs: []irqLine{
			{n: 67, name: "idpf-Mailbox-0"},
			{n: 68, name: "idpf-eth1-TxRx-1"},
			{n: 70, name: "idpf-eth1-TxRx-3"},
			{n: 71, name: "idpf-eth1-TxRx-4"},
			{n: 72, name: "idpf-eth1-Tx-5"},
		},
		ifname: "eth1", driver: "idpf",
		want: "68:combined-0(idpf) 70:combined-1(idpf) 71:combined-2(idpf) 72:tx-3(idpf)",
	},
	{
		name:   "idpf after the fix: numbered by queue",
		source: "the same patch (\"After\")",
		irqs: []irqLine{
			{n: 67, name: "idpf-Mailbox-0"},
			{n: 68, name: "idpf-eth1-TxRx-0"},
			{n: 70, name: "idpf-eth1-TxRx-1"},
			{n: 71, name: "idpf-eth1-TxRx-2"},
			{n: 72, name: "idpf-eth1-Tx-3"},
		},
		ifname: "eth1", driver: "idpf",
		want: "68:combined-0(idpf) 70:combined-1(idpf) 71:combined-2(idpf) 72:tx-3(idpf)",
	},
	{
		name:   "ThunderX nicvf: a completion vector beside its buffer-ring and error vectors (ITS-MSI)",
		source: "xdp-newbies, Srivats P, Re: IRQ assignment for queues, 2021-04-22 (Message-ID CANzUK5_i9cynLiTB8-C-S90_7K_YutTcn8nDvxboKWU0=wfe4A@mail.gmail.com, \"the Cavium ThunderX nic_vf driver\"), https://lore.kernel.org/xdp-newbies/CANzUK5_i9cynLiTB8-C-S90_7K_YutTcn8nDvxboKWU0=wfe4A@mail.gmail.com/ (each line was wrapped in the mail and is joined here)",
		text: ` 73:          0          2          0          0   ITS-MSI 2623488 Edge      enp5s0f1-rxtx-0
 89:          0          0          0          0   ITS-MSI 2623504 Edge      enp5s0f1-rbdr-0
 92:          0          0          0          0   ITS-MSI 2623507 Edge      enp5s0f1-qset-err-0`,
		ifname: "enp5s0f1", driver: "thunder-nicvf",
		want: "73:combined-0(if-rxtx) other:89 other:92",
	},
	{
		name:   "sfc (Solarflare) IF-N on the old PCI-MSI-X chip, two ports",
		source: "Solarflare Server Adapter User Guide, Issue 20 (2017), 3.26 Interrupt Affinity, Example 2 (cat /proc/interrupts | grep eth0, | grep eth1), page 115, https://manualshive.com/en/manual/solarflare/solarflare-xtremescale-series/1313800?page=122 (the page's text layer renders the hyphens as U+2010; written here as ASCII)",
		text: `123: 13302 0 1278131 0 PCI-MSI-X eth0-0
131: 0 24 0 0 PCI-MSI-X eth1-0`,
		ifname: "eth0", driver: "sfc",
		want: "123:combined-0(if-n)",
	},
}

// withHeader adds a /proc/interrupts header ("CPU0 CPU1 ...") to lines
// that have none, with as many columns as the first line has counts.
func withHeader(text string) string {
	first, _, _ := strings.Cut(text, "\n")
	if strings.Contains(first, "CPU") {
		return text + "\n"
	}
	_, tail, _ := strings.Cut(first, ":")
	var b strings.Builder
	for i, f := range strings.Fields(tail) {
		if strings.Trim(f, "0123456789") != "" {
			break
		}
		fmt.Fprintf(&b, " CPU%d", i)
	}
	return b.String() + "\n" + text + "\n"
}
