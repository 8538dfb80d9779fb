package host

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The matcher combines every piece of evidence the kernel gives about a
// NIC's IRQs, strongest first:
//
//   - which IRQs are the NIC's: the PCI function's msi_irqs, the PCI
//     address in /proc/interrupts' chip column ("PCI-MSIX-0000:07:00.0",
//     6.2+), or the requester ID x86 encodes in the MSI hwirq before 6.2
//     ("IR-PCI-MSI 52955137-edge": domain<<27 | bus:devfn<<11 | index);
//   - what each IRQ serves: the action names in /proc/interrupts, or the
//     action directories in /proc/irq/N when the column is empty, against
//     the user's patterns and then the drivers' conventions (irqRules);
//   - the order of the vectors, only when no name matched and the NIC's
//     unnamed vectors are exactly as many as its queues.
//
// Each mapped IRQ says how it was matched (QueueIRQ.How), each IRQ of the
// NIC left over says why (NICIRQ.Why).

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
	ev := irqEvidence{in: &r.snap.Interrupts, actions: r.irqActionDirs, hint: r.irqHint}
	for _, n := range r.snap.NICs {
		if !n.Virtual {
			ev.nics = append(ev.nics, n.Name)
		}
	}
	for i := range r.snap.NICs {
		mapNIC(&r.snap.NICs[i], ev, rules, len(user) > 0)
	}
}

// irqEvidence is what the kernel says about all IRQs.
type irqEvidence struct {
	in *Interrupts
	// actions lists the action directories of /proc/irq/N (nil: none).
	actions func(irq int) []string
	// hint reads /proc/irq/N/affinity_hint (nil: none).
	hint func(irq int) *CPUSet
	// nics are the names of the host's NICs with a device: a PCI
	// function can carry several (mlx4's two ports), and one port's
	// vectors are not the other's to report.
	nics []string
}

// namedForOther reports whether an IRQ name is another NIC's ("eth3-0"
// on eth2's PCI function, "enp5s0f4d1 (queue 3)" on enp5s0f4's).
func (ev irqEvidence) namedForOther(self, name string) bool {
	for _, o := range ev.nics {
		if o != self && (name == o || strings.HasPrefix(name, o+"-") || strings.HasPrefix(name, o+"_") || strings.HasPrefix(name, o+" ") || strings.Contains(name, "-"+o+"-")) {
			return true
		}
	}
	return false
}

// irqActionDirs lists /proc/irq/N's subdirectories, which request_irq
// names after each action ("eth0-TxRx-3").
func (r *reader) irqActionDirs(irq int) []string {
	var out []string
	for _, e := range r.dir(fmt.Sprintf("/proc/irq/%d", irq)) {
		if e.Dir {
			out = append(out, e.Name)
		}
	}
	return out
}

// irqHint reads /proc/irq/N/affinity_hint, a CPU mask ("00000000,00000004");
// a mask with no CPU means the driver set no hint.
func (r *reader) irqHint(irq int) *CPUSet {
	set, ok := r.cpuMask(fmt.Sprintf("/proc/irq/%d/affinity_hint", irq))
	if !ok || set.Len() == 0 {
		return nil
	}
	return set
}

// msiChip matches a chip column that names the PCI function (6.2+:
// "PCI-MSIX-0000:07:00.0", "IR-PCI-MSI-0000:00:19.0"); the prefix is the
// parent domain's, one word ("IR-" on x86 with interrupt remapping,
// "ITS-" on arm64 GICv3).
var msiChip = regexp.MustCompile(`^(?:[A-Za-z0-9]+-)?PCI-MSI(?:X)?-([0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])$`)

// msiSource returns the PCI function an MSI IRQ belongs to, its vector
// index and which column said so; "" when the line does not tell.
func msiSource(q *IRQ) (bus string, index int, how string) {
	h, err := strconv.ParseUint(q.HWIRQ, 10, 64)
	if err != nil {
		return "", -1, ""
	}
	if m := msiChip.FindStringSubmatch(q.Chip); m != nil {
		return m[1], int(h), "PCI column"
	}
	if q.Chip == "PCI-MSI" || q.Chip == "IR-PCI-MSI" {
		// x86's pci_msi_domain_calc_hwirq before 6.2.
		return fmt.Sprintf("%04x:%02x:%02x.%d", h>>27, (h>>19)&0xff, (h>>14)&0x1f, (h>>11)&7), int(h & 0x7ff), "MSI hwirq"
	}
	return "", -1, ""
}

// irqMatch is one candidate IRQ of a NIC and what was learnt about it.
type irqMatch struct {
	q       *IRQ
	owner   string // "msi_irqs", "PCI column", "MSI hwirq", "name"
	index   int    // MSI vector index, -1 unknown
	actions []string
}

// mapNIC classifies the NIC's candidate IRQs: its PCI device's MSI IRQs
// and any IRQ whose name a rule matches or that mentions the NIC. Only
// IRQs whose names contain one of the NIC's values are tried against the
// built-in rules (regular expressions cost; big hosts have a thousand IRQs).
func mapNIC(n *NIC, ev irqEvidence, rules []irqRule, tryAll bool) {
	n.QueueIRQs, n.OtherIRQs, n.UnmappedIRQs, n.UnmappedQueues = nil, nil, nil, nil
	if n.Virtual && len(n.MSIIRQs) == 0 && !tryAll {
		return // veth, bridges, lo: no device, no IRQs
	}
	vars := varsOf(n)
	cands := candidates(n, ev, vars, tryAll)
	if len(cands) == 0 {
		assignQueueIRQs(n)
		return
	}
	compiled := vars.compile(rules)
	mentions, err := regexp.Compile(`(^|[^A-Za-z0-9])` + regexp.QuoteMeta(n.Name) + `([^A-Za-z0-9]|$)`)
	if err != nil {
		mentions = regexp.MustCompile(`^\b\B$`) // a name that is not UTF-8 is mentioned nowhere
	}
	var left []irqMatch
	var split []int // QueueIRQs numbered the gve way
	for _, c := range cands {
		matched, halves := classifyIRQ(n, c, compiled)
		if halves {
			split = append(split, len(n.QueueIRQs)-1)
		}
		mine := mentions.MatchString(c.q.Name)
		if !matched && ((c.owner != "name" && c.owner != "" && !ev.namedForOther(n.Name, c.q.Name)) || mine) {
			left = append(left, c)
		}
	}
	splitHalves(n, split)
	truncatedDuplicates(n, cands)
	vmxnet3RxAfterTx(n)
	enetcTxRoundRobin(n)
	vectorRank(n, "idpf")
	sameNameRings(n, cands)
	onlyVector(n)
	left = truncatedTxRx(n, left)
	left = byVectorOrder(n, left)
	// Last, so that no step above reads the queues it leaves empty as
	// "no name matched" and maps a misc vector in their place.
	ambiguous := sameNameQueues(n, cands)
	for _, c := range left {
		n.UnmappedIRQs = append(n.UnmappedIRQs, NICIRQ{IRQ: c.q.Number, Name: c.q.Name, Why: whyUnmatched(n, c, len(left))})
	}
	n.UnmappedIRQs = append(n.UnmappedIRQs, ambiguous...)
	assignQueueIRQs(n)
}

// candidates lists the IRQs that may be the NIC's, with the evidence.
func candidates(n *NIC, ev irqEvidence, vars nicVars, tryAll bool) []irqMatch {
	var out []irqMatch
	for i := range ev.in.IRQs {
		q := &ev.in.IRQs[i]
		c := irqMatch{q: q, index: -1, actions: q.Actions()}
		bus, idx, how := msiSource(q)
		switch {
		case slices.Contains(n.MSIIRQs, q.Number):
			c.owner = "msi_irqs"
		case bus != "" && bus == n.PCIAddress:
			c.owner = how
		case vars.mentioned(q.Name):
			c.owner = "name"
		case !tryAll:
			continue
		}
		if bus == n.PCIAddress {
			c.index = idx
		}
		if len(c.actions) == 0 && c.owner != "" && ev.actions != nil {
			c.actions = ev.actions(q.Number)
		}
		if q.Hint == nil && c.owner != "" && ev.hint != nil {
			q.Hint = ev.hint(q.Number)
		}
		out = append(out, c)
	}
	return out
}

// mentioned reports whether an IRQ name contains one of the NIC's values,
// which every built-in rule needs.
func (v nicVars) mentioned(name string) bool {
	for _, s := range []string{v.ifname, v.bus, v.virtio, v.xenvif} {
		if s != "" && strings.Contains(name, s) {
			return true
		}
	}
	return false
}

// classifyIRQ tries every action name of the IRQ against the rules; the
// first rule that matches decides. split reports a gve-numbered queue IRQ.
func classifyIRQ(n *NIC, c irqMatch, rules []compiledRule) (matched, split bool) {
	for _, action := range c.actions {
		for _, rule := range rules {
			m := rule.re.FindStringSubmatch(action)
			if m == nil {
				continue
			}
			if rule.kind == "" {
				n.OtherIRQs = append(n.OtherIRQs, NICIRQ{IRQ: c.q.Number, Name: c.q.Name, Why: rule.why})
				return true, false
			}
			idx, err := strconv.Atoi(m[1])
			if err != nil {
				continue
			}
			if rule.divisor > 1 {
				idx /= rule.divisor
			}
			if idx -= rule.offset; idx < 0 {
				continue
			}
			how := rule.desc()
			if rule.note != "" {
				how += "; " + rule.note
			}
			if action != c.q.Name {
				how += " (from its action directory in /proc/irq/N)"
			}
			if c.owner != "name" && c.owner != "" {
				how += "; the NIC's by " + c.owner
			}
			if len(rule.alsoTx) > 0 {
				how += fmt.Sprintf("; also serves tx-%s", joinIntsDash(rule.alsoTx))
			}
			n.QueueIRQs = append(n.QueueIRQs, QueueIRQ{IRQ: c.q.Number, Name: c.q.Name, Queue: idx, Kind: rule.kind, Rule: rule.name, How: how, AlsoTx: rule.alsoTx})
			return true, rule.split
		}
	}
	return false, false
}

// splitHalves applies gve's numbering: notification blocks 0..N/2-1
// serve tx queues, N/2..N-1 rx queues (gve_tx_idx_to_ntfy,
// gve_rx_idx_to_ntfy).
func splitHalves(n *NIC, split []int) {
	blocks := 0
	for _, i := range split {
		blocks = max(blocks, n.QueueIRQs[i].Queue+1)
	}
	half := blocks / 2
	if half == 0 {
		return
	}
	for _, i := range split {
		m := &n.QueueIRQs[i]
		if m.Kind = QueueTx; m.Queue >= half {
			m.Kind, m.Queue = QueueRx, m.Queue-half
		}
		m.How += fmt.Sprintf("; blocks 0-%d serve tx, %d-%d rx", half-1, half, blocks-1)
	}
}

// onlyVector: a single-queue NIC whose one vector is named after it and
// that has no queue vector (r8169, e1000e in MSI mode) serves its queue
// pair with that vector; beside queue vectors the same name is the misc
// vector (ixgbe, igb).
func onlyVector(n *NIC) {
	if len(n.QueueIRQs) > 0 || len(n.OtherIRQs) != 1 || n.OtherIRQs[0].Name != n.Name ||
		max(len(n.RxQueues), len(n.TxQueues)) != 1 {
		return
	}
	o := n.OtherIRQs[0]
	n.OtherIRQs = nil
	n.QueueIRQs = []QueueIRQ{{IRQ: o.IRQ, Name: o.Name, Queue: 0, Kind: QueueCombined, Rule: "if-only",
		How: "name if-only {IF}: the single-queue NIC's only vector"}}
}

// sameNameRings applies atlantic's naming: every ring vector carries the
// interface's bare name (aq_nic_start requests vector i for ring i with
// ndev->name; the link vector after them is IF:link in newer drivers), so
// the IRQs named IF are the rings in vector order, one per queue pair, and
// any beyond the queues serve none.
func sameNameRings(n *NIC, cands []irqMatch) {
	if n.Driver != "atlantic" || len(n.QueueIRQs) > 0 || len(n.OtherIRQs) < 2 {
		return
	}
	index := map[int]int{}
	for _, c := range cands {
		index[c.q.Number] = c.index
	}
	var rings []NICIRQ
	for _, o := range n.OtherIRQs {
		if o.Name != n.Name {
			return
		}
		rings = append(rings, o)
	}
	slices.SortStableFunc(rings, func(a, b NICIRQ) int {
		if ia, ib := index[a.IRQ], index[b.IRQ]; ia >= 0 && ib >= 0 {
			return ia - ib
		}
		return a.IRQ - b.IRQ
	})
	nq := max(len(n.RxQueues), len(n.TxQueues))
	n.OtherIRQs = nil
	for i, o := range rings {
		if nq > 0 && i >= nq { // no queue directories: every one is listed
			o.Why = "atlantic vector beyond the NIC's queues (link, or a ring without a queue)"
			n.OtherIRQs = append(n.OtherIRQs, o)
			continue
		}
		n.QueueIRQs = append(n.QueueIRQs, QueueIRQ{IRQ: o.IRQ, Name: o.Name, Queue: i, Kind: QueueCombined, Rule: "atlantic",
			How: fmt.Sprintf("name atlantic {IF} on every ring vector: queue %d is the %s vector named %s, in vector order", i, ordinal(i+1), n.Name)})
	}
}

// ordinal writes 1 as "1st", 2 as "2nd" ...
func ordinal(i int) string {
	suffix := "th"
	if i%100 < 11 || i%100 > 13 {
		suffix = [...]string{"th", "st", "nd", "rd", "th", "th", "th", "th", "th", "th"}[i%10]
	}
	return strconv.Itoa(i) + suffix
}

// bnxtNameMax is how many characters bnxt_en kept of an IRQ name before
// Linux 6.12 (struct bnxt_irq's char name[IFNAMSIZ + 2]; "bnxt_en:
// resize bnxt_irq name field to fit format string", netdev 2024-09-09):
// "enp4s0f0np0-TxRx-0" became "enp4s0f0np0-TxRx-", every queue alike.
const bnxtNameMax = 17

// truncatedTxRx maps bnxt_en vectors whose IF-TxRx-N name was cut to
// bnxtNameMax characters before the queue number: the queue is the
// vector's place among them, in vector order. It returns the IRQs still
// unmapped.
func truncatedTxRx(n *NIC, left []irqMatch) []irqMatch {
	if n.Driver != "bnxt_en" || len(n.QueueIRQs) > 0 {
		return left
	}
	full := n.Name + "-TxRx-"
	var cut, rest []irqMatch
	for _, c := range left {
		if len(c.q.Name) == bnxtNameMax && strings.HasPrefix(full, c.q.Name) {
			cut = append(cut, c)
			continue
		}
		rest = append(rest, c)
	}
	if len(cut) == 0 {
		return left
	}
	byIndex := true
	for _, c := range cut {
		byIndex = byIndex && c.index >= 0
	}
	slices.SortStableFunc(cut, func(a, b irqMatch) int {
		if byIndex {
			return a.index - b.index
		}
		return a.q.Number - b.q.Number
	})
	order := "IRQ number"
	if byIndex {
		order = "vector index (" + cut[0].owner + ")"
	}
	for i, c := range cut {
		n.QueueIRQs = append(n.QueueIRQs, QueueIRQ{IRQ: c.q.Number, Name: c.q.Name, Queue: i, Kind: QueueCombined, Rule: "bnxt-truncated",
			How: fmt.Sprintf("name bnxt_en {IF}-TxRx-N cut to %d characters before the queue number (Linux before 6.12): the %d such vectors by %s", bnxtNameMax, len(cut), order)})
	}
	return rest
}

// truncatedDuplicates undoes bnxt_en's cut names when they still end in
// a number: with a 10-character interface name, IF-TxRx-10 (18
// characters) was cut to bnxtNameMax, IF-TxRx-1, so the name rule read
// queues 10.. as queue 1 again. When two of the NIC's vectors of one rule
// claim the same queue and one of them has a name of exactly bnxtNameMax
// characters, the names cannot be trusted: that rule's vectors are
// numbered in vector order (the MSI-X index when the kernel gives it,
// else the IRQ number, as bnxt_en requests ring i's vector i), and "how
// matched" says why.
func truncatedDuplicates(n *NIC, cands []irqMatch) {
	if n.Driver != "bnxt_en" {
		return
	}
	rule, name, ok := duplicateCut(n)
	if !ok {
		return
	}
	index := map[int]int{}
	for _, c := range cands {
		index[c.q.Number] = c.index
	}
	var mine []int // positions in QueueIRQs
	byIndex := true
	for i, m := range n.QueueIRQs {
		if m.Rule == rule {
			mine = append(mine, i)
			byIndex = byIndex && index[m.IRQ] >= 0
		}
	}
	ordered := slices.Clone(mine)
	slices.SortStableFunc(ordered, func(a, b int) int {
		ia, ib := n.QueueIRQs[a].IRQ, n.QueueIRQs[b].IRQ
		if byIndex {
			return index[ia] - index[ib]
		}
		return ia - ib
	})
	order := "IRQ number"
	if byIndex {
		order = "vector index"
	}
	for q, i := range ordered {
		m := &n.QueueIRQs[i]
		m.Queue = q
		m.Rule = "bnxt-truncated"
		m.How = fmt.Sprintf("vector order: bnxt_en before Linux 6.12 cut IRQ names to %d characters, so %q names several vectors (IF-TxRx-1N read as queue 1); the %d vectors of rule %s by %s", bnxtNameMax, name, len(ordered), rule, order)
	}
}

// sameNameQueues settles queue IRQs whose names claim the same queue:
// interfaces of one name in different network namespaces (SR-IOV VFs
// handed to containers, each called net1) name their vectors alike, and
// /proc/interrupts lists them all. When exactly one of the claimants is
// owned by the NIC's PCI function (msi_irqs, the PCI column, the MSI
// hwirq) it is kept and the others, another device's, are dropped; when
// no evidence tells them apart, none is kept, and each is returned as
// unmapped with the reason rather than given to the NIC as its own.
// Several owned claimants are a contradiction and are left unmapped too.
func sameNameQueues(n *NIC, cands []irqMatch) []NICIRQ {
	owned := map[int]bool{}
	for _, c := range cands {
		owned[c.q.Number] = c.owner != "name" && c.owner != ""
	}
	type key struct {
		rule  string
		kind  QueueKind
		queue int
	}
	claims, owners := map[key]int{}, map[key]int{}
	for _, m := range n.QueueIRQs {
		k := key{m.Rule, m.Kind, m.Queue}
		claims[k]++
		owners[k] += b2i(owned[m.IRQ])
	}
	var keep []QueueIRQ
	var out []NICIRQ
	for _, m := range n.QueueIRQs {
		k := key{m.Rule, m.Kind, m.Queue}
		switch {
		case claims[k] == 1 || (owners[k] == 1 && owned[m.IRQ]):
			keep = append(keep, m)
		case owners[k] != 1:
			out = append(out, NICIRQ{IRQ: m.IRQ, Name: m.Name, Why: fmt.Sprintf(
				"%d IRQs are named for %s-%d (an interface of the same name in another network namespace?) and the MSI evidence does not say which is this NIC's", claims[k], m.Kind, m.Queue)})
		}
	}
	n.QueueIRQs = keep
	return out
}

// duplicateCut finds two queue IRQs of one rule, kind and queue, one named
// with exactly bnxtNameMax characters.
func duplicateCut(n *NIC) (rule, name string, ok bool) {
	type key struct {
		rule  string
		kind  QueueKind
		queue int
	}
	seen := map[key]string{}
	for _, m := range n.QueueIRQs {
		k := key{m.Rule, m.Kind, m.Queue}
		if prev, dup := seen[k]; dup && (len(prev) == bnxtNameMax || len(m.Name) == bnxtNameMax) {
			return m.Rule, m.Name, true
		}
		seen[k] = m.Name
	}
	return "", "", false
}

// vmxnet3RxAfterTx applies vmxnet3's numbering outside buddy-share mode:
// IF-tx-V and IF-rx-V carry the vector number, and the rx vectors follow
// the tx ones (vmxnet3_request_irqs), so rx queue i is IF-rx-(T+i).
func vmxnet3RxAfterTx(n *NIC) {
	if n.Driver != "vmxnet3" {
		return
	}
	tx := 0
	for _, m := range n.QueueIRQs {
		tx += b2i(m.Rule == "if-tx")
	}
	for i := range n.QueueIRQs {
		if m := &n.QueueIRQs[i]; m.Rule == "if-rx" && tx > 0 && m.Queue >= tx {
			m.Queue -= tx
			m.How += fmt.Sprintf("; vmxnet3 numbers vectors, rx after the %d tx", tx)
		}
	}
}

// enetcTxRoundRobin applies enetc's default tx ring mapping: vector i
// (IF-rxtxI) serves rx ring i and the tx rings t with t mod N = i, N the
// vectors (enetc_alloc_msix: "idx = priv->bdr_int_num * j + i"). An
// LS1028A has 8 tx rings on 1 or 2 vectors, so without this tx-2..tx-7
// would have no IRQ. Applied only when the vectors are numbered 0..N-1.
func enetcTxRoundRobin(n *NIC) {
	at := map[int]int{} // vector number -> index in QueueIRQs
	for i, m := range n.QueueIRQs {
		if m.Rule == "enetc" {
			at[m.Queue] = i
		}
	}
	vectors := len(at)
	for v := range vectors {
		if _, ok := at[v]; !ok {
			return
		}
	}
	for _, q := range n.TxQueues {
		if vectors == 0 || q.Index < vectors {
			continue
		}
		m := &n.QueueIRQs[at[q.Index%vectors]]
		m.AlsoTx = append(m.AlsoTx, q.Index)
		if !strings.Contains(m.How, "in turn") {
			m.How += fmt.Sprintf("; enetc deals tx rings over its %d vectors in turn (tx ring t on vector t mod %d)", vectors, vectors)
		}
	}
}

// vectorRank renumbers a rule's queue IRQs by their rank in the number
// their names carry, for drivers whose names number vectors, not queues,
// and whose vector k serves queue k (idpf: see idpfNote). Names numbered
// 0..n-1 keep their numbers. A number carried twice is left alone: the
// names are then two devices' (sameNameQueues).
func vectorRank(n *NIC, rule string) {
	var mine []int
	for i, m := range n.QueueIRQs {
		if m.Rule == rule {
			mine = append(mine, i)
		}
	}
	slices.SortStableFunc(mine, func(a, b int) int { return n.QueueIRQs[a].Queue - n.QueueIRQs[b].Queue })
	for k := 1; k < len(mine); k++ {
		if n.QueueIRQs[mine[k]].Queue == n.QueueIRQs[mine[k-1]].Queue {
			return // one number twice: two devices' names, for sameNameQueues
		}
	}
	for rank, i := range mine {
		if m := &n.QueueIRQs[i]; m.Queue != rank {
			m.How += fmt.Sprintf("; named %d, the %s such vector", m.Queue, ordinal(rank+1))
			m.Queue = rank
		}
	}
}

// byVectorOrder maps queues to the NIC's vectors in order when no name
// told anything and the vectors the device owns (not merely named after
// it) are exactly one per queue. It returns the IRQs still unmapped.
func byVectorOrder(n *NIC, left []irqMatch) []irqMatch {
	nq := max(len(n.RxQueues), len(n.TxQueues))
	if len(n.QueueIRQs) > 0 || nq == 0 || len(left) != nq {
		return left
	}
	for _, c := range left {
		if c.owner == "name" || c.owner == "" || len(c.actions) == 0 {
			return left
		}
	}
	ordered := slices.Clone(left)
	slices.SortStableFunc(ordered, func(a, b irqMatch) int {
		if a.index >= 0 && b.index >= 0 {
			return a.index - b.index
		}
		return a.q.Number - b.q.Number
	})
	how := fmt.Sprintf("vector order: the NIC's %d vectors (by %s) that no name rule matched, in vector order, for %d queues", nq, left[0].owner, nq)
	how += hintOrder(ordered)
	for i, c := range ordered {
		n.QueueIRQs = append(n.QueueIRQs, QueueIRQ{IRQ: c.q.Number, Name: c.q.Name, Queue: i, Kind: QueueCombined, Rule: "order", How: how})
	}
	return nil
}

// joinIntsDash writes queue numbers as "0" or "0,2".
func joinIntsDash(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// hintOrder says what the drivers' affinity hints add to a vector-order
// mapping: a driver hints queue i's vector at the i-th CPU of its spread
// (cpumask_local_spread), so distinct one-CPU hints show the vectors are
// distinct queues; the CPUs themselves do not number the queues (the
// spread starts on the device's node), so they confirm, never reorder.
func hintOrder(ordered []irqMatch) string {
	seen := map[int]bool{}
	var cpus []int
	for _, c := range ordered {
		h := c.q.Hint
		if h == nil {
			return ""
		}
		l := h.CPUs()
		if len(l) != 1 || seen[l[0]] {
			return fmt.Sprintf("; affinity_hint does not tell the vectors apart (%s)", hintList(ordered))
		}
		seen[l[0]] = true
		cpus = append(cpus, l[0])
	}
	return fmt.Sprintf("; the driver's affinity_hint gives each a CPU of its own (%s)", joinIntsDash(cpus))
}

// hintList writes the vectors' hints, "-" for none.
func hintList(ms []irqMatch) string {
	var out []string
	for _, c := range ms {
		if c.q.Hint == nil {
			out = append(out, "-")
			continue
		}
		out = append(out, c.q.Hint.String())
	}
	return strings.Join(out, " ")
}

// whyUnmatched says why an IRQ of the NIC was left unmapped.
func whyUnmatched(n *NIC, c irqMatch, left int) string {
	if len(c.actions) == 0 {
		return "no action name: the vector is allocated but has no handler (queue stopped or freed)"
	}
	drv := n.Driver
	if drv == "" {
		drv = "an unknown driver"
	}
	why := fmt.Sprintf("the name fits no naming convention known for %s (see --irq-pattern)", drv)
	if nq := max(len(n.RxQueues), len(n.TxQueues)); len(n.QueueIRQs) == 0 && c.owner != "name" && left != nq {
		why += fmt.Sprintf("; vector order not used: %d such vectors for %d queues", left, nq)
	}
	return why
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
		for _, t := range m.AlsoTx {
			if q := tx[t]; q != nil {
				q.IRQs = append(q.IRQs, m.IRQ)
			}
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
