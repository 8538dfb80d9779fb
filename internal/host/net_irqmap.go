package host

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Queue IRQs are found by the names drivers give them in /proc/interrupts
// (the action column), matched against the NIC's name, driver, PCI
// address and virtio device:
//
//	mlx5_comp3@pci:0000:3b:00.0      mlx5 (mlx5_async*, mlx5_pages* serve no queue)
//	eth0-TxRx-3, eth0-rx-3, eth0-tx-3   ixgbe, igb, bnxt
//	i40e-eth0-TxRx-3, ice-eth0-TxRx-3   i40e, ice (DRIVER-IF-...)
//	hns3-0000:7d:00.0-TxRx-6         hns3 (DRIVER-BUS-...; the index counts 0, 2, 4)
//	eth0-Tx-Rx-3                     ENA (ena-mgmnt@pci:BUS serves no queue)
//	enp25s0_qp3, enp25s0_qp_3        hinic (the write-up's Kunpeng NIC)
//	virtio2-input.3, virtio2-output.3   virtio_net (virtio2-config serves no queue)

// irqRule is one naming convention. tmpl is a regular expression with
// placeholders {IF}, {DRIVER}, {BUS} and {VIRTIO}, replaced by the NIC's
// values regex-escaped, and one capture group for the queue number.
// Rules whose kind is empty match IRQs that serve no queue.
type irqRule struct {
	name    string
	tmpl    string
	kind    QueueKind
	divisor int    // the driver counts queues by this step (hns3: 2)
	driver  string // only for this driver
}

var irqRules = []irqRule{
	{name: "mlx5", tmpl: `mlx5_comp(\d+)@pci:{BUS}`, kind: QueueCombined},
	{name: "mlx5", tmpl: `mlx5_[a-z_]+\d*@pci:{BUS}`},
	{name: "hns3", tmpl: `{DRIVER}-{BUS}-TxRx-(\d+)`, kind: QueueCombined, divisor: 2, driver: "hns3"},
	{name: "hns3", tmpl: `{DRIVER}-{BUS}-Rx-(\d+)`, kind: QueueRx, driver: "hns3"},
	{name: "hns3", tmpl: `{DRIVER}-{BUS}-Tx-(\d+)`, kind: QueueTx, driver: "hns3"},
	{name: "driver-bus-txrx", tmpl: `{DRIVER}-{BUS}-TxRx-(\d+)`, kind: QueueCombined},
	{name: "driver-if-txrx", tmpl: `{DRIVER}-{IF}-TxRx-(\d+)`, kind: QueueCombined},
	{name: "driver-if-rx", tmpl: `{DRIVER}-{IF}-rx-(\d+)`, kind: QueueRx},
	{name: "driver-if-tx", tmpl: `{DRIVER}-{IF}-tx-(\d+)`, kind: QueueTx},
	{name: "if-txrx", tmpl: `{IF}-TxRx-(\d+)`, kind: QueueCombined},
	{name: "if-rx", tmpl: `{IF}-rx-(\d+)`, kind: QueueRx},
	{name: "if-tx", tmpl: `{IF}-tx-(\d+)`, kind: QueueTx},
	{name: "ena", tmpl: `{IF}-Tx-Rx-(\d+)`, kind: QueueCombined},
	{name: "ena", tmpl: `ena-mgmnt@pci:{BUS}`},
	{name: "hinic", tmpl: `{IF}_qp_?(\d+)`, kind: QueueCombined},
	{name: "virtio", tmpl: `{VIRTIO}-input\.(\d+)`, kind: QueueRx},
	{name: "virtio", tmpl: `{VIRTIO}-output\.(\d+)`, kind: QueueTx},
	{name: "virtio", tmpl: `{VIRTIO}-(?:config|control)`},
	{name: "intel-misc", tmpl: `{DRIVER}-{BUS}:misc`},
	{name: "intel-misc", tmpl: `{IF}`},
}

// nicVars are the values a rule's placeholders stand for.
type nicVars struct{ ifname, driver, bus, virtio string }

func (v nicVars) expand(tmpl string) (string, bool) {
	for _, p := range []struct{ ph, val string }{{"{IF}", v.ifname}, {"{DRIVER}", v.driver}, {"{BUS}", v.bus}, {"{VIRTIO}", v.virtio}} {
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
		out = append(out, compiledRule{irqRule: r, re: regexp.MustCompile("^(?:" + expr + ")$")})
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

// mapQueueIRQs maps each NIC's IRQs to its queues.
func mapQueueIRQs(r *reader) {
	var user []irqRule
	for _, p := range r.opts.IRQPatterns {
		rule, err := parseIRQPattern(p)
		if err != nil {
			r.fail(err)
			continue
		}
		user = append(user, rule)
	}
	rules := append(user, irqRules...)
	for i := range r.snap.NICs {
		mapNIC(&r.snap.NICs[i], &r.snap.Interrupts, rules, len(user) > 0)
	}
}

func varsOf(n *NIC) nicVars {
	v := nicVars{ifname: n.Name, driver: n.Driver, bus: n.PCIAddress}
	if strings.HasPrefix(n.Driver, "virtio") {
		if base := n.Device[strings.LastIndex(n.Device, "/")+1:]; strings.HasPrefix(base, "virtio") {
			v.virtio = base
		}
	}
	return v
}

// mapNIC classifies the NIC's candidate IRQs: its PCI device's MSI IRQs
// and any IRQ whose name a rule matches or that mentions the NIC. Only
// IRQs whose names contain one of the NIC's values are tried against the
// built-in rules (regular expressions cost; big hosts have a thousand IRQs).
func mapNIC(n *NIC, in *Interrupts, rules []irqRule, tryAll bool) {
	n.QueueIRQs, n.OtherIRQs, n.UnmappedIRQs, n.UnmappedQueues = nil, nil, nil, nil
	if n.Virtual && len(n.MSIIRQs) == 0 && !tryAll {
		return
	}
	vars := varsOf(n)
	compiled := vars.compile(rules)
	mentions := regexp.MustCompile(`(^|[^A-Za-z0-9])` + regexp.QuoteMeta(n.Name) + `([^A-Za-z0-9]|$)`)
	for i := range in.IRQs {
		q := &in.IRQs[i]
		msi := slices.Contains(n.MSIIRQs, q.Number)
		if !msi && !tryAll && !vars.mentioned(q.Name) {
			continue
		}
		matched := classifyIRQ(n, q, compiled)
		if !matched && (msi || mentions.MatchString(q.Name)) {
			n.UnmappedIRQs = append(n.UnmappedIRQs, NICIRQ{IRQ: q.Number, Name: q.Name})
		}
	}
	assignQueueIRQs(n)
}

// mentioned reports whether an IRQ name contains one of the NIC's values,
// which every built-in rule needs.
func (v nicVars) mentioned(name string) bool {
	for _, s := range []string{v.ifname, v.bus, v.virtio} {
		if s != "" && strings.Contains(name, s) {
			return true
		}
	}
	return false
}

// classifyIRQ tries every action name of q against the rules; the first
// rule that matches decides.
func classifyIRQ(n *NIC, q *IRQ, rules []compiledRule) bool {
	for _, action := range q.Actions() {
		for _, rule := range rules {
			m := rule.re.FindStringSubmatch(action)
			if m == nil {
				continue
			}
			if rule.kind == "" {
				n.OtherIRQs = append(n.OtherIRQs, NICIRQ{IRQ: q.Number, Name: q.Name})
				return true
			}
			idx, err := strconv.Atoi(m[1])
			if err != nil {
				continue
			}
			if rule.divisor > 1 {
				idx /= rule.divisor
			}
			n.QueueIRQs = append(n.QueueIRQs, QueueIRQ{IRQ: q.Number, Name: q.Name, Queue: idx, Kind: rule.kind, Rule: rule.name})
			return true
		}
	}
	return false
}

// assignQueueIRQs copies the mapping onto the queues and lists the queues
// left without an IRQ.
func assignQueueIRQs(n *NIC) {
	rx, tx := map[int]*RxQueue{}, map[int]*TxQueue{}
	for i := range n.RxQueues {
		n.RxQueues[i].IRQs = nil
		rx[n.RxQueues[i].Index] = &n.RxQueues[i]
	}
	for i := range n.TxQueues {
		n.TxQueues[i].IRQs = nil
		tx[n.TxQueues[i].Index] = &n.TxQueues[i]
	}
	for i := range n.QueueIRQs {
		m := &n.QueueIRQs[i]
		found := false
		if q := rx[m.Queue]; q != nil && m.Kind != QueueTx {
			q.IRQs, found = append(q.IRQs, m.IRQ), true
		}
		if q := tx[m.Queue]; q != nil && m.Kind != QueueRx {
			q.IRQs, found = append(q.IRQs, m.IRQ), true
		}
		m.NoQueue = !found
	}
	if len(n.QueueIRQs) == 0 && len(n.UnmappedIRQs) == 0 {
		return // no IRQ is known for this NIC: nothing to say per queue
	}
	for _, q := range n.RxQueues {
		if len(q.IRQs) == 0 {
			n.UnmappedQueues = append(n.UnmappedQueues, fmt.Sprintf("rx-%d", q.Index))
		}
	}
	for _, q := range n.TxQueues {
		if len(q.IRQs) == 0 {
			n.UnmappedQueues = append(n.UnmappedQueues, fmt.Sprintf("tx-%d", q.Index))
		}
	}
}
