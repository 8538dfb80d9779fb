package host

import (
	"fmt"
	"regexp"
	"strings"
)

// Queue IRQs are found by the names drivers give them in /proc/interrupts
// (the action column), matched against the NIC's name, driver, PCI
// address and virtio device. The names come from each driver's
// request_irq/snprintf:
//
//	mlx5_comp3@pci:0000:3b:00.0      mlx5 (mlx5_async*, mlx5_pages* serve no queue)
//	eth0                             misc vector beside queue vectors (ixgbe, igb); a
//	                                 single-queue NIC's only vector (r8169, e1000e with MSI)
//	eth2-3, mlx4-1@pci:0000:04:00.0  mlx4_en (the mlx4-N@pci vectors are EQs, not queues); sfc, r8125
//	eth0-tx-0, eth0-rx-1, eth0-txrx-1   tg3 (numbered by vector: vector 0 serves link and tx-0,
//	                                 rx ring i is vector i+1; eth0-0 is vector 0 with TSS)
//	eth0-TxRx-3, eth0-rx-3, eth0-tx-3   ixgbe, igb, igc, bnxt_en, fm10k
//	i40e-eth0-TxRx-3, ice-eth0-TxRx-3   i40e, ice (DRIVER-IF-...)
//	hns3-0000:7d:00.0-TxRx-6         hns3 (DRIVER-BUS-...; the index counts 0, 2, 4)
//	eth0-Tx-Rx-3, ena-TxRx-3@pci:BUS ENA (ena-mgmnt@pci:BUS serves no queue)
//	enp25s0_qp3, enp25s0_qp_3        hinic
//	eth0-rxtx-3, eth0-event-0        vmxnet3 buddy-share mode, nfp, octeontx2 (the event vector serves no queue)
//	eth0-rxtx3                       enetc (NXP LS1028A, i.MX95)
//	eth0-rxtx-3, eth0-rbdr-0         ThunderX nicvf (a completion queue per queue pair; rbdr-N and
//	                                 qset-err-N serve no queue)
//	eth0:rx-3, eth0:tx-3, eth0:mac   stmmac with per-queue vectors (Intel, Loongson, NXP S32;
//	                                 mac, wol, lpi and safety* serve no queue)
//	iavf-eth0-TxRx-3, iavf-BUS:mbx   iavf (the mailbox vector serves no queue)
//	idpf-eth0-TxRx-3, idpf-eth0-Tx-4 idpf (Rx-N, Tx-N for vectors of one direction; numbered
//	                                 by the device's vector index before 2025; idpf-Mailbox-0)
//	eth0-tx-0-rx-3                   qlcnic (the last rx ring's vector also serves tx-0)
//	gve-ntfy-blk3@pci:BUS            gve (the first half of the blocks serve tx, the second rx)
//	eth0-fp-3                        qede, bnx2x (fastpath)
//	eth0-q3                          be2net, octeon_ep (event queue per queue pair)
//	enp5s0f4d1 (queue 3)             cxgb4, cxgb3 (Chelsio: "%s (queue %d)", one per queue set)
//	mana_q3@pci:BUS                  Azure MANA (mana_hwc@pci:BUS serves no queue)
//	virtio2-input.3, virtio2-output.3   virtio_net (virtio2-config serves no queue)
//	vif0-q3-rx, vif0-q3-tx           xen-netfront split event channels ("vif" + the xenbus
//	                                 device id, not the interface name); eth0 when unsplit

// irqRule is one naming convention. tmpl is a regular expression with
// placeholders {IF}, {DRIVER}, {BUS}, {VIRTIO} and {XENVIF}, replaced by the NIC's
// values regex-escaped, and one capture group for the queue number.
// Rules whose kind is empty match IRQs that serve no queue; their why
// says what they serve.
type irqRule struct {
	name    string // the family ("mlx5", "if-txrx", "user:REGEXP:...")
	tmpl    string
	kind    QueueKind
	divisor int    // the driver counts queues by this step (hns3: 2)
	offset  int    // the number is the vector's, queue = number - offset (tg3: 1)
	note    string // for a queue rule: what its how adds about the numbering
	driver  string // only for this driver
	split   bool   // gve: the first half of the indexes are tx queues, the rest rx
	alsoTx  []int  // qlcnic: tx queues the IRQ serves besides its own
	why     string // for kind "": what the IRQ serves instead
}

// desc is the convention as the summary shows it ("IF-TxRx-N").
func (r irqRule) desc() string {
	if strings.HasPrefix(r.name, "user:") {
		return "user pattern " + strings.TrimPrefix(r.name, "user:")
	}
	d := strings.NewReplacer(`\(`, "(", `\)`, ")", `(\d+)`, "N", `\.`, ".", `_?`, "", `(?:`, "", `)`, "").Replace(r.tmpl)
	return fmt.Sprintf("name %s %s", r.name, d)
}

var irqRules = []irqRule{
	{name: "mlx5", tmpl: `mlx5_comp(\d+)@pci:{BUS}`, kind: QueueCombined},
	{name: "mlx5", tmpl: `mlx5_[a-z_]+\d*@pci:{BUS}`, why: "mlx5 async/control vector"},
	{name: "mlx4", tmpl: `mlx4-(?:comp-|async)?\d*@(?:pci:)?{BUS}`, why: "mlx4 event queue vector (mlx4_en renames the ones its rings use to IF-N)"},
	{name: "hns3", tmpl: `{DRIVER}-{BUS}-TxRx-(\d+)`, kind: QueueCombined, divisor: 2, driver: "hns3"},
	{name: "hns3", tmpl: `{DRIVER}-{BUS}-Rx-(\d+)`, kind: QueueRx, driver: "hns3"},
	{name: "hns3", tmpl: `{DRIVER}-{BUS}-Tx-(\d+)`, kind: QueueTx, driver: "hns3"},
	{name: "hns3", tmpl: `hclge-misc-{BUS}`, why: "hns3 misc (hclge) vector"},
	{name: "tg3", tmpl: `{IF}-txrx-(\d+)`, kind: QueueCombined, offset: 1, driver: "tg3", note: tg3Note},
	{name: "tg3", tmpl: `{IF}-rx-(\d+)`, kind: QueueRx, offset: 1, driver: "tg3", note: tg3Note},
	{name: "tg3", tmpl: `{IF}-0`, driver: "tg3", why: "tg3 vector 0 with TSS: link events (the rings are on vectors 1..N)"},
	{name: "idpf", tmpl: `{DRIVER}-{IF}-TxRx-(\d+)`, kind: QueueCombined, driver: "idpf", note: idpfNote},
	{name: "idpf", tmpl: `{DRIVER}-{IF}-Rx-(\d+)`, kind: QueueRx, driver: "idpf", note: idpfNote},
	{name: "idpf", tmpl: `{DRIVER}-{IF}-Tx-(\d+)`, kind: QueueTx, driver: "idpf", note: idpfNote},
	{name: "idpf", tmpl: `{DRIVER}-Mailbox-\d+`, driver: "idpf", why: "idpf mailbox vector"},
	{name: "driver-bus-txrx", tmpl: `{DRIVER}-{BUS}-TxRx-(\d+)`, kind: QueueCombined},
	{name: "driver-if-txrx", tmpl: `{DRIVER}-{IF}-TxRx-(\d+)`, kind: QueueCombined},
	{name: "driver-if-rx", tmpl: `{DRIVER}-{IF}-rx-(\d+)`, kind: QueueRx},
	{name: "driver-if-tx", tmpl: `{DRIVER}-{IF}-tx-(\d+)`, kind: QueueTx},
	{name: "if-txrx", tmpl: `{IF}-TxRx-(\d+)`, kind: QueueCombined},
	{name: "qlcnic", tmpl: `{IF}-tx-0-rx-(\d+)`, kind: QueueRx, alsoTx: []int{0}},
	{name: "if-rx", tmpl: `{IF}-rx-(\d+)`, kind: QueueRx},
	{name: "if-tx", tmpl: `{IF}-tx-(\d+)`, kind: QueueTx},
	{name: "if-rxtx", tmpl: `{IF}-rxtx-(\d+)`, kind: QueueCombined},
	{name: "enetc", tmpl: `{IF}-rxtx(\d+)`, kind: QueueCombined},
	{name: "nicvf", tmpl: `{IF}-(?:rbdr|qset-err)-\d+`, why: "ThunderX nicvf receive-buffer ring refill or queue-set error vector"},
	{name: "stmmac", tmpl: `{IF}:rx-(\d+)`, kind: QueueRx},
	{name: "stmmac", tmpl: `{IF}:tx-(\d+)`, kind: QueueTx},
	{name: "stmmac", tmpl: `{IF}:(?:mac|wol|lpi|safety|safety-ce|safety-ue)`, why: "stmmac MAC, wake-on-LAN, LPI or safety-feature vector"},
	{name: "vmxnet3", tmpl: `{IF}-event-\d+`, why: "vmxnet3 event vector"},
	{name: "if-n", tmpl: `{IF}-(\d+)`, kind: QueueCombined},
	{name: "if-fp", tmpl: `{IF}-fp-(\d+)`, kind: QueueCombined},
	{name: "if-q", tmpl: `{IF}-[qQ](\d+)`, kind: QueueCombined},
	{name: "cxgb", tmpl: `{IF} \(queue (\d+)\)`, kind: QueueCombined},
	{name: "mana", tmpl: `mana_q(\d+)@pci:{BUS}`, kind: QueueCombined},
	{name: "mana", tmpl: `mana_hwc@pci:{BUS}`, why: "MANA hardware channel vector"},
	{name: "ena", tmpl: `{IF}-Tx-Rx-(\d+)`, kind: QueueCombined},
	{name: "ena", tmpl: `ena-TxRx-(\d+)@pci:{BUS}`, kind: QueueCombined},
	{name: "ena", tmpl: `ena-mgmnt@pci:{BUS}`, why: "ENA management (admin queue) vector"},
	{name: "gve", tmpl: `gve-ntfy-blk(\d+)@pci:{BUS}`, kind: QueueCombined, split: true},
	{name: "gve", tmpl: `[^ ]*-ntfy-block\.(\d+)`, kind: QueueCombined, split: true, driver: "gve"},
	{name: "gve", tmpl: `gve-mgmnt@pci:{BUS}`, why: "gve management vector"},
	{name: "hinic", tmpl: `{IF}_qp_?(\d+)`, kind: QueueCombined},
	{name: "hinic", tmpl: `hinic_[ac]eq\d+@pci:{BUS}`, why: "hinic event queue vector"},
	{name: "virtio", tmpl: `{VIRTIO}-input\.(\d+)`, kind: QueueRx},
	{name: "virtio", tmpl: `{VIRTIO}-output\.(\d+)`, kind: QueueTx},
	{name: "virtio", tmpl: `{VIRTIO}-(?:config|control)`, why: "virtio configuration-change vector"},
	{name: "xen-netfront", tmpl: `{XENVIF}-q(\d+)-rx`, kind: QueueRx},
	{name: "xen-netfront", tmpl: `{XENVIF}-q(\d+)-tx`, kind: QueueTx},
	{name: "virtio", tmpl: `{VIRTIO}-virtqueues`, why: "one vector shared by all the device's virtqueues (no per-queue IRQ)"},
	{name: "intel-misc", tmpl: `{DRIVER}-{BUS}:misc`, why: "the driver's misc (link, mailbox) vector"},
	{name: "intel-misc", tmpl: `{DRIVER}-{BUS}:mbx`, why: "iavf mailbox (admin queue) vector"},
	{name: "intel-misc", tmpl: `{DRIVER}-{BUS}:ctrl-TxRx-\d+`, why: "ice control VSI (flow director) vector"},
	{name: "intel-misc", tmpl: `{DRIVER}-{BUS}:fdir-TxRx-\d+`, why: "i40e flow director sideband vector"},
	{name: "if-only", tmpl: `{IF}`, why: "the driver's misc (link, mailbox) vector"},
}

// idpfNote says how idpf's numbers are read: before Linux commit
// 1500a866 ("idpf: change IRQ naming to match netdev and ethtool queue
// numbering", backported to 6.12.y) the number was the vector's index in
// the device (idpf-eth1-TxRx-1, -3, -4, idpf-eth1-Tx-5 for queues 0-3),
// after it the queue's; vector k serves queue k either way, so the queues
// are the vectors' ranks by that number (vectorRank).
const idpfNote = "idpf: queue k is the k-th vector by the number in its name (older drivers numbered by the vector's index in the device)"

// tg3Note says how tg3 numbers its vectors (tg3_request_irq names each by
// its vector number; tg3 napi[0] serves link and, without TSS, tx-0, and
// napi[i] the rx ring i-1).
const tg3Note = "tg3 numbers vectors: rx ring i is vector i+1"

// nicVars are the values a rule's placeholders stand for.
type nicVars struct{ ifname, driver, bus, virtio, xenvif string }

func (v nicVars) expand(tmpl string) (string, bool) {
	for _, p := range []struct{ ph, val string }{{"{IF}", v.ifname}, {"{DRIVER}", v.driver}, {"{BUS}", v.bus}, {"{VIRTIO}", v.virtio}, {"{XENVIF}", v.xenvif}} {
		if strings.Contains(tmpl, p.ph) {
			if p.val == "" {
				return "", false
			}
			tmpl = strings.ReplaceAll(tmpl, p.ph, regexp.QuoteMeta(p.val))
		}
	}
	return tmpl, true
}

// compiledRule is a rule with its placeholders filled in for one NIC.
type compiledRule struct {
	irqRule
	re *regexp.Regexp
}

func (v nicVars) compile(rules []irqRule) []compiledRule {
	var out []compiledRule
	for _, r := range rules {
		if r.driver != "" && r.driver != v.driver {
			continue
		}
		expr, ok := v.expand(r.tmpl)
		if !ok {
			continue
		}
		re, err := regexp.Compile("^(?:" + expr + ")$")
		if err != nil {
			continue // a value that is not UTF-8 makes no valid pattern
		}
		out = append(out, compiledRule{irqRule: r, re: re})
	}
	return out
}

// ValidateIRQPattern checks an oeAware-style queue-to-IRQ pattern (see
// Options.IRQPatterns) and says what is wrong with it.
func ValidateIRQPattern(p string) error {
	_, err := parseIRQPattern(p)
	return err
}

// parseIRQPattern turns an oeAware-style queue-to-IRQ pattern into a rule:
// "REGEXP:VAR_ETH_qpVAR_QUEUE" matches enp25s0_qp3 for NIC enp25s0, queue
// 3. VAR_ETH, VAR_DRIVER and VAR_BUSINFO stand for the NIC's name, driver
// and PCI address, regex-escaped (oeAware substitutes them unescaped);
// VAR_QUEUE is the queue number. The rest is a regular expression matched
// against the whole IRQ name (oeAware searches anywhere in it; write .* to
// do that). The IRQ serves rx-N and tx-N.
func parseIRQPattern(p string) (irqRule, error) {
	body, ok := strings.CutPrefix(p, "REGEXP:")
	if !ok {
		return irqRule{}, fmt.Errorf("IRQ pattern %q: want REGEXP:<template>, e.g. REGEXP:VAR_ETH_qpVAR_QUEUE", p)
	}
	if strings.Count(body, "VAR_QUEUE") != 1 {
		return irqRule{}, fmt.Errorf("IRQ pattern %q: needs VAR_QUEUE exactly once", p)
	}
	tmpl := strings.NewReplacer("VAR_ETH", "{IF}", "VAR_DRIVER", "{DRIVER}", "VAR_BUSINFO", "{BUS}", "VAR_QUEUE", `(\d+)`).Replace(body)
	test := strings.NewReplacer("{IF}", "x", "{DRIVER}", "x", "{BUS}", "x").Replace(tmpl)
	re, err := regexp.Compile(test)
	if err != nil {
		return irqRule{}, fmt.Errorf("IRQ pattern %q: %w", p, err)
	}
	if re.NumSubexp() != 1 {
		return irqRule{}, fmt.Errorf("IRQ pattern %q: use (?:...) for groups; only VAR_QUEUE may capture", p)
	}
	return irqRule{name: "user:" + p, tmpl: tmpl, kind: QueueCombined}, nil
}

// virtioDevice matches the virtio device a virtio NIC's device link
// points at (".../0000:00:03.0/virtio2").
var virtioDevice = regexp.MustCompile(`^virtio\d+$`)

// xenVIF matches a xen-netfront NIC's xenbus device ("/sys/devices/vif-0"),
// whose queues' event channels are named after it ("vif0-q3-rx").
var xenVIF = regexp.MustCompile(`^vif-(\d+)$`)

func varsOf(n *NIC) nicVars {
	v := nicVars{ifname: n.Name, driver: n.Driver, bus: n.PCIAddress}
	// The device path says virtioN even when the tree lacks the driver
	// link (a capture that could not read it, or a driver built in).
	if base := n.Device[strings.LastIndex(n.Device, "/")+1:]; virtioDevice.MatchString(base) {
		v.virtio = base
	}
	if m := xenVIF.FindStringSubmatch(n.Device[strings.LastIndex(n.Device, "/")+1:]); m != nil {
		v.xenvif = "vif" + m[1]
	}
	return v
}
