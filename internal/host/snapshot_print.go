package host

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"redline/internal/textsafe"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteSummary writes a readable account of the snapshot: the machine and
// its topology, each NIC's queues with their IRQs, affinities and the NUMA
// nodes those reach (IRQs that reach beyond the NIC's node are marked),
// the Redis processes with their threads' CPUs and nodes, the settings the
// doctor looks at, and whatever could not be read.
func WriteSummary(w io.Writer, s *Snapshot) error {
	sw := &summaryWriter{w: w, s: s}
	sw.header()
	sw.topology()
	for i := range s.NICs {
		sw.nic(&s.NICs[i])
	}
	sw.processes()
	sw.settings()
	sw.errors()
	return sw.err
}

type summaryWriter struct {
	w   io.Writer
	s   *Snapshot
	err error
}

// printf writes a line of the summary. Names and values come from the
// host or a capture (IRQ names, interface names, command lines) and may
// hold terminal controls: they are escaped (textsafe), as in every report.
func (sw *summaryWriter) printf(format string, args ...any) {
	if sw.err == nil {
		_, sw.err = io.WriteString(sw.w, textsafe.Printable(fmt.Sprintf(format, args...)))
	}
}

func (sw *summaryWriter) header() {
	s := sw.s
	where := "live"
	if !s.Source.Live {
		where = "from " + s.Source.Root
	}
	host := s.Hostname
	if host == "" {
		host = "(no hostname)"
	}
	sw.printf("Host      %s (%s)\n", host, where)
	sw.printf("Kernel    %s %s\n", orDash(s.Kernel.Release), s.Kernel.Arch)
	if params := notableParams(s.Kernel.Params); params != "" {
		sw.printf("Cmdline   %s\n", params)
	}
	sw.printf("Machine   %s\n", machineLine(s))
	if s.Container.Detected {
		sw.printf("Container %s (%s)\n", s.Container.Kind, strings.Join(s.Container.Evidence, "; "))
	}
}

// notableParams are the boot parameters that change CPU, IRQ or memory
// behaviour.
var notableParamNames = []string{"isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity", "transparent_hugepage",
	"numa_balancing", "clocksource", "tsc", "intel_idle.max_cstate", "processor.max_cstate", "idle",
	"intel_pstate", "nosmt", "mitigations", "default_hugepagesz", "hugepages", "skew_tick"}

func notableParams(p map[string]string) string {
	var out []string
	for _, name := range notableParamNames {
		if v, ok := p[name]; ok {
			if v == "" {
				out = append(out, name)
			} else {
				out = append(out, name+"="+v)
			}
		}
	}
	return strings.Join(out, " ")
}

func machineLine(s *Snapshot) string {
	parts := []string{orDash(s.CPU.ModelName)}
	if v := s.Virtualization; v != nil {
		switch {
		case v.Vendor != "" || v.Product != "":
			parts = append(parts, strings.TrimSpace(v.Vendor+" "+v.Product))
		}
		if v.Hypervisor {
			parts = append(parts, "virtual machine")
		}
		if v.Type != "" {
			parts = append(parts, "hypervisor "+v.Type)
		}
	}
	return strings.Join(parts, ", ")
}

func (sw *summaryWriter) topology() {
	s := sw.s
	t := s.CPU
	smt := ""
	if t.SMTActive != nil {
		smt = map[bool]string{true: ", SMT on", false: ", SMT off"}[*t.SMTActive]
	}
	if t.Online == nil && len(t.CPUs) == 0 && len(s.Interrupts.CPUs) > 0 {
		// A capture of /proc/interrupts alone: its header is the only word
		// on the CPUs, and only on the ones it counts.
		sw.printf("\nCPUs      unknown (no /sys/devices/system/cpu in this tree); inferred from /proc/interrupts' header: it counts CPU %s\n",
			NewCPUSet(s.Interrupts.CPUs...).List())
	} else {
		sw.printf("\nCPUs      %d online (%s) of %d possible: %d package(s), %d cores, %d threads%s\n",
			t.Threads, setStr(t.Online), len(t.CPUs), t.Packages, t.Cores, t.Threads, smt)
	}
	if t.Isolated != nil && !t.Isolated.IsEmpty() {
		sw.printf("          isolated %s\n", t.Isolated)
	}
	if t.NohzFull != nil && !t.NohzFull.IsEmpty() {
		sw.printf("          nohz_full %s\n", t.NohzFull)
	}
	for _, n := range s.NUMA.Nodes {
		mem := ""
		if n.MemTotal != nil {
			mem = ", " + humanBytes(*n.MemTotal)
			if n.MemFree != nil {
				mem += " (" + humanBytes(*n.MemFree) + " free)"
			}
		}
		sw.printf("NUMA %-4d CPUs %s%s%s\n", n.ID, n.CPUs, mem, distances(n.Distances))
	}
	switch {
	case len(s.NUMA.Nodes) > 0:
	case !s.Source.Live && s.CPU.Online == nil:
		// a tree without the CPU topology says nothing of the kernel's NUMA
		sw.printf("NUMA      unknown (no /sys/devices/system/node in this tree)\n")
	default:
		sw.printf("NUMA      no node information (kernel without NUMA)\n")
	}
	sw.printf("Freq      %s\n", freqLine(t.Freq))
	sw.printf("Idle      %s\n", idleLine(t))
	if cs := s.Clocksource; cs != nil {
		sw.printf("Clock     %s (available: %s)\n", cs.Current, strings.Join(cs.Available, " "))
	}
}

func distances(d []int) string {
	if len(d) < 2 {
		return ""
	}
	s := make([]string, len(d))
	for i, v := range d {
		s[i] = strconv.Itoa(v)
	}
	return ", distances " + strings.Join(s, " ")
}

// freqLine groups the CPUs by governor.
func freqLine(policies []FreqPolicy) string {
	if len(policies) == 0 {
		return "no cpufreq (common in VMs)"
	}
	byGov := map[string]CPUSet{}
	driver := policies[0].Driver
	for _, p := range policies {
		byGov[p.Governor] = byGov[p.Governor].Union(p.CPUs)
	}
	var parts []string
	for _, g := range slices.Sorted(maps.Keys(byGov)) {
		parts = append(parts, fmt.Sprintf("%s on %s", g, byGov[g].String()))
	}
	return driver + ": " + strings.Join(parts, ", ")
}

func idleLine(t CPUTopology) string {
	for _, c := range t.CPUs {
		if len(c.Idle) == 0 {
			continue
		}
		var states []string
		for _, st := range c.Idle {
			lat := "?"
			if st.LatencyUs != nil {
				lat = strconv.FormatInt(*st.LatencyUs, 10)
			}
			dis := ""
			if st.Disabled {
				dis = " disabled"
			}
			states = append(states, fmt.Sprintf("%s (%s µs%s)", st.Name, lat, dis))
		}
		return fmt.Sprintf("%s: %s (as on CPU %d)", orDash(t.IdleDriver), strings.Join(states, ", "), c.ID)
	}
	return "no cpuidle states"
}

func (sw *summaryWriter) nic(n *NIC) {
	sw.printf("\nNIC %s  %s\n", n.Name, nicLine(n))
	if len(n.Addresses) > 0 {
		sw.printf("  addresses %s\n", strings.Join(n.Addresses, " "))
	}
	if len(n.Lower) > 0 {
		var phys []string
		for _, l := range sw.s.LowerNICs(n) {
			phys = append(phys, l.Name)
		}
		sw.printf("  over %s (queues and IRQs: %s)\n", strings.Join(n.Lower, ", "), strings.Join(phys, ", "))
	}
	if n.Virtual && len(n.QueueIRQs) == 0 {
		sw.printf("  virtual, %d rx / %d tx queues%s\n", len(n.RxQueues), len(n.TxQueues), rpsXPSLine(n))
		return
	}
	if e := n.Ethtool; e != nil && e.Channels != nil {
		c := e.Channels
		sw.printf("  channels combined %d (max %d), rx %d (max %d), tx %d (max %d)%s\n",
			c.Combined, c.MaxCombined, c.Rx, c.MaxRx, c.Tx, c.MaxTx, coalesceLine(e.Coalesce))
	}
	if n.Inferred != "" {
		// Everything below is read off the IRQ names: say so first, and
		// print no queue count the tree cannot give.
		sw.printf("  INFERRED %s\n  queues unknown; the IRQs below are the ones the names map\n", n.Inferred)
	} else {
		sw.printf("  %d rx / %d tx queues%s\n", len(n.RxQueues), len(n.TxQueues), rpsXPSLine(n))
	}
	if len(n.QueueIRQs) > 0 {
		sw.queueTable(n)
		sw.matchedBy(n)
	}
	for _, q := range n.OtherIRQs {
		sw.printf("  other IRQ %d %s: %s\n", q.IRQ, orDash(q.Name), q.Why)
	}
	for _, q := range n.UnmappedIRQs {
		sw.printf("  UNMAPPED IRQ %d %s: %s\n", q.IRQ, orDash(q.Name), q.Why)
	}
	if len(n.UnmappedQueues) > 0 {
		sw.printf("  queues without an IRQ: %s\n", strings.Join(n.UnmappedQueues, " "))
	}
	if len(n.QueueIRQs) == 0 && len(n.UnmappedIRQs) == 0 && !n.Virtual && n.Inferred == "" {
		sw.printf("  no queue IRQs found (no MSI IRQs, and no IRQ named after %s)\n", n.Name)
	}
}

func nicLine(n *NIC) string {
	parts := []string{orDash(n.Driver)}
	if n.PCIAddress != "" {
		parts = append(parts, n.PCIAddress)
	}
	switch {
	case n.NUMANode == nil:
		parts = append(parts, "no NUMA node")
	case *n.NUMANode < 0:
		parts = append(parts, "NUMA node -1 (unknown)")
	default:
		parts = append(parts, fmt.Sprintf("NUMA node %d", *n.NUMANode))
	}
	if n.LocalCPUs != nil {
		parts = append(parts, "local CPUs "+n.LocalCPUs.String())
	}
	parts = append(parts, orDash(n.OperState))
	if n.SpeedMbps != nil {
		parts = append(parts, fmt.Sprintf("%d Mb/s", *n.SpeedMbps))
	}
	if n.MTU != nil {
		parts = append(parts, fmt.Sprintf("mtu %d", *n.MTU))
	}
	return strings.Join(parts, ", ")
}

func coalesceLine(c *Coalesce) string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf("; adaptive-rx %s", map[bool]string{true: "on", false: "off"}[c.AdaptiveRx])
}

// rpsXPSLine says whether RPS and XPS are set, unset or not applicable.
func rpsXPSLine(n *NIC) string {
	rps, rpsNA, xps, xpsNA := 0, 0, 0, 0
	for _, q := range n.RxQueues {
		if q.RPSUnsupported {
			rpsNA++
		} else if q.RPSCPUs != nil && !q.RPSCPUs.IsEmpty() {
			rps++
		}
	}
	for _, q := range n.TxQueues {
		if q.XPSUnsupported {
			xpsNA++
		} else if q.XPSCPUs != nil && !q.XPSCPUs.IsEmpty() {
			xps++
		}
	}
	return fmt.Sprintf("; RPS set on %s; XPS set on %s", countOf(rps, rpsNA, len(n.RxQueues)), countOf(xps, xpsNA, len(n.TxQueues)))
}

func countOf(set, na, total int) string {
	if na == total && total > 0 {
		return "none (not applicable)"
	}
	return fmt.Sprintf("%d/%d", set, total)
}

// queueTable prints queue -> IRQ -> affinity -> where its interrupts
// went -> nodes, one row per mapped IRQ, and marks IRQs whose CPUs leave
// the NIC's node.
func (sw *summaryWriter) queueTable(n *NIC) {
	local := -1
	if n.NUMANode != nil {
		local = *n.NUMANode
	}
	hints := slices.ContainsFunc(n.QueueIRQs, func(m QueueIRQ) bool {
		q := sw.s.Interrupts.IRQ(m.IRQ)
		return q != nil && q.Hint != nil
	})
	head := []string{"queue", "irq", "name", "affinity", "effective", "delivered since boot", "nodes"}
	if hints {
		// the driver's intended CPU beside where the IRQ goes
		head = slices.Insert(head, 3, "hint")
	}
	rows := [][]string{head}
	off := 0
	for _, m := range n.QueueIRQs {
		q := sw.s.Interrupts.IRQ(m.IRQ)
		aff, eff, nodes, hint, got := "-", "-", "-", "-", "-"
		if q != nil {
			aff, eff, hint = setStr(q.Affinity), setStr(q.Effective), setStr(q.Hint)
			if len(q.Counts) > 0 {
				// where the interrupts went: the configured CPUs
				// say where they may go
				by := sw.s.Interrupts.CountsByCPU(q)
				var total uint64
				for _, c := range by {
					total += c
				}
				got = CPUShares(by, total, 2)
			}
			where := q.Effective
			if where == nil || where.IsEmpty() {
				where = q.Affinity
			}
			if where != nil {
				ns := sw.s.NodesOf(*where)
				nodes = joinInts(ns)
				if local >= 0 && slices.ContainsFunc(ns, func(x int) bool { return x != local }) {
					nodes, off = nodes+"  <- off node "+strconv.Itoa(local), off+1
				}
			}
		}
		row := []string{queueName(m), strconv.Itoa(m.IRQ), m.Name, aff, eff, got, nodes}
		if hints {
			row = slices.Insert(row, 3, hint)
		}
		rows = append(rows, row)
	}
	sw.table(rows)
	switch {
	case local < 0:
		sw.printf("  (the NIC's NUMA node is unknown: no locality check)\n")
	case off > 0:
		sw.printf("  %d of %d queue IRQs are delivered outside node %d\n", off, len(n.QueueIRQs), local)
	}
}

// matchedBy says how the queue IRQs were matched, once per way.
func (sw *summaryWriter) matchedBy(n *NIC) {
	var hows []string
	count := map[string]int{}
	for _, m := range n.QueueIRQs {
		if count[m.How] == 0 {
			hows = append(hows, m.How)
		}
		count[m.How]++
	}
	for _, h := range hows {
		sw.printf("  matched %d by %s\n", count[h], h)
	}
}

func queueName(m QueueIRQ) string {
	name := fmt.Sprintf("%s-%d", m.Kind, m.Queue)
	if m.Kind == QueueCombined {
		name = fmt.Sprintf("rx/tx-%d", m.Queue)
	}
	for _, t := range m.AlsoTx {
		name += fmt.Sprintf("+tx-%d", t)
	}
	if m.NoQueue {
		name += " (no such queue)"
	}
	return name
}

func (sw *summaryWriter) processes() {
	if len(sw.s.Processes) == 0 {
		sw.printf("\nRedis     no redis-server process found\n")
		return
	}
	for i := range sw.s.Processes {
		sw.process(&sw.s.Processes[i])
	}
}

func (sw *summaryWriter) process(p *Process) {
	s := sw.s
	sw.printf("\nRedis pid %d (%s) %s\n", p.PID, p.Comm, strings.Join(p.Cmdline, " "))
	var listen []string
	for _, l := range p.Listen {
		listen = append(listen, fmt.Sprintf("%s %s", l.Family, joinHostPort(l.Addr, l.Port)))
	}
	if len(listen) > 0 {
		sw.printf("  listens  %s\n", strings.Join(listen, ", "))
	}
	if len(p.Traffic) > 0 || len(p.ListenNICs) > 0 {
		sw.printf("  via      %s\n", trafficLine(p))
	}
	if p.CPUsAllowed != nil {
		sw.printf("  CPUs     %s (nodes %s)\n", p.CPUsAllowed, joinInts(s.NodesOf(*p.CPUsAllowed)))
	}
	sw.printf("  memory   %s\n", memoryLine(p, sw.refused()))
	netns := "the inspector's"
	switch {
	case p.NetNS == 0:
		netns = "unknown (" + sw.refused() + ")"
	case !p.NetNSIsInspector:
		netns = fmt.Sprintf("its own (%d)", p.NetNS)
		if p.NetNSName != "" {
			netns = fmt.Sprintf("its own (%d, ip netns %s)", p.NetNS, p.NetNSName)
		}
		if v, ok := p.NetSysctls["net.core.somaxconn"]; ok {
			netns += ", somaxconn " + v
		}
		netns += "; reach it with --netns " + p.NetNSFlag()
	}
	sw.printf("  netns    %s\n", netns)
	if p.OpenFiles != nil {
		sw.printf("  nofile   %s soft, %s hard\n", limitStr(p.OpenFiles.Soft), limitStr(p.OpenFiles.Hard))
	}
	if cg := p.Cgroup; cg != nil {
		sw.printf("  cgroup   %s\n", cgroupSummary(cg))
	}
	sw.threadTable(p)
}

func trafficLine(p *Process) string {
	var parts []string
	for _, t := range p.Traffic {
		parts = append(parts, fmt.Sprintf("%s (%d connection%s)", t.NIC, t.Connections, plural(t.Connections)))
	}
	if len(parts) == 0 {
		return "listening on " + strings.Join(p.ListenNICs, ", ") + " (no connections now)"
	}
	return strings.Join(parts, ", ")
}

// refused says why a process's file was not read: not root, or (as root)
// the kernel refused anyway.
func (sw *summaryWriter) refused() string {
	if sw.s.Source.AsRoot {
		return "the kernel refused it to root: a container or a security module denies it"
	}
	return "run as root to read it"
}

func memoryLine(p *Process, refused string) string {
	var parts []string
	if p.VmRSS != nil {
		parts = append(parts, "RSS "+humanBytes(*p.VmRSS))
	}
	if p.VmSwap != nil {
		parts = append(parts, "swap "+humanBytes(*p.VmSwap))
	}
	if p.AnonHugePages != nil {
		parts = append(parts, "THP "+humanBytes(*p.AnonHugePages))
	}
	if len(p.NUMABytes) > 0 {
		var total uint64
		for _, b := range p.NUMABytes {
			total += b
		}
		var per []string
		for _, node := range sortedIntKeys(p.NUMABytes) {
			per = append(per, fmt.Sprintf("node %d %.0f%%", node, 100*float64(p.NUMABytes[node])/float64(max(total, 1))))
		}
		parts = append(parts, "resident by node: "+strings.Join(per, ", "))
	}
	if len(parts) == 0 {
		return "unknown (" + refused + ")"
	}
	return strings.Join(parts, ", ")
}

func cgroupSummary(cg *Cgroup) string {
	parts := []string{fmt.Sprintf("v%d %s", cg.Version, cg.Path)}
	if cg.CPUs != nil {
		parts = append(parts, "cpuset "+cg.CPUs.String())
	}
	if cg.CPUQuotaUs != nil && cg.CPUPeriodUs != nil {
		parts = append(parts, fmt.Sprintf("cpu quota %.2f CPUs", float64(*cg.CPUQuotaUs)/float64(*cg.CPUPeriodUs)))
	}
	if cg.NrThrottled != nil && *cg.NrThrottled > 0 {
		parts = append(parts, fmt.Sprintf("throttled %d times", *cg.NrThrottled))
	}
	if cg.MemoryMax != nil {
		parts = append(parts, "memory.max "+humanBytes(*cg.MemoryMax))
	}
	return strings.Join(parts, ", ")
}

func (sw *summaryWriter) threadTable(p *Process) {
	own := slices.ContainsFunc(p.Threads, func(t Thread) bool { return t.CPUsAllowed != nil })
	irqsOn := sw.queueIRQsByCPU()
	shared := slices.ContainsFunc(p.Threads, func(t Thread) bool { return t.CPU != nil && len(irqsOn[*t.CPU]) > 0 })
	header := []string{"tid", "role", "name", "cpu", "node"}
	if shared {
		header = append(header, "NIC queue IRQs on that cpu")
	}
	if own {
		header = append(header, "own affinity")
	}
	rows := [][]string{header}
	for _, t := range p.Threads {
		cpu, node := "-", "-"
		if t.CPU != nil {
			cpu = strconv.Itoa(*t.CPU)
		}
		if t.Node != nil {
			node = strconv.Itoa(*t.Node)
		}
		row := []string{strconv.Itoa(t.TID), t.Role, t.Comm, cpu, node}
		if shared {
			on := "-"
			if t.CPU != nil && len(irqsOn[*t.CPU]) > 0 {
				on = strings.Join(irqsOn[*t.CPU], ", ")
			}
			row = append(row, on)
		}
		if own {
			row = append(row, setStr(t.CPUsAllowed))
		}
		rows = append(rows, row)
	}
	sw.table(rows)
}

// queueIRQsByCPU maps each CPU to the NIC queue IRQs delivered there
// ("33 virtio1-input.1"): the effective CPUs, else the allowed ones when
// that is a single CPU.
func (sw *summaryWriter) queueIRQsByCPU() map[int][]string {
	out := map[int][]string{}
	for _, n := range sw.s.NICs {
		for _, m := range n.QueueIRQs {
			q := sw.s.Interrupts.IRQ(m.IRQ)
			if q == nil {
				continue
			}
			where := q.Effective
			if where == nil && q.Affinity != nil && q.Affinity.Len() == 1 {
				where = q.Affinity
			}
			if where == nil {
				continue
			}
			for _, c := range where.CPUs() {
				out[c] = append(out[c], fmt.Sprintf("%d %s", m.IRQ, m.Name))
			}
		}
	}
	return out
}

// table prints rows in aligned columns, indented by two spaces, without
// trailing blanks.
func (sw *summaryWriter) table(rows [][]string) {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = textsafe.Printable(c) // escaped before the layout counts widths
		}
		fmt.Fprintln(tw, "  "+strings.Join(cells, "\t"))
	}
	tw.Flush()
	for _, line := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		sw.printf("%s\n", strings.TrimRight(line, " "))
	}
}

// settingRows are the sysctls shown in the summary, in order.
var settingRows = [][]string{
	{"vm.overcommit_memory", "vm.swappiness", "vm.zone_reclaim_mode", "kernel.numa_balancing"},
	{"net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog", "net.core.netdev_max_backlog", "net.core.netdev_budget"},
	{"net.ipv4.ip_local_port_range", "net.ipv4.tcp_tw_reuse", "net.ipv4.tcp_fin_timeout", "fs.nr_open"},
}

// nodesMemory sums the NUMA nodes' MemTotal (ok when every node has one).
func nodesMemory(s *Snapshot) (uint64, bool) {
	var sum uint64
	for _, n := range s.NUMA.Nodes {
		if n.MemTotal == nil {
			return 0, false
		}
		sum += *n.MemTotal
	}
	return sum, len(s.NUMA.Nodes) > 0
}

// differ reports whether two memory totals are more than 5% apart (the
// kernel's own reservations keep them a little apart on every machine).
func differ(a, b uint64) bool {
	lo, hi := min(a, b), max(a, b)
	return hi-lo > hi/20
}

func (sw *summaryWriter) settings() {
	s := sw.s
	sw.printf("\nSettings\n")
	if t := s.THP; t != nil {
		sw.printf("  THP enabled %s, defrag %s\n", orDash(t.Enabled), orDash(t.Defrag))
	}
	if m := s.Memory; m.MemTotal != nil {
		swap := "none"
		if m.SwapTotal != nil && *m.SwapTotal > 0 {
			swap = humanBytes(*m.SwapTotal)
		}
		sw.printf("  memory %s, swap %s\n", humanBytes(*m.MemTotal), swap)
		if nodes, ok := nodesMemory(s); ok && differ(nodes, *m.MemTotal) {
			sw.printf("         (the NUMA nodes hold %s: /proc/meminfo and /sys/devices/system/node differ when a container or hypervisor shows its own meminfo (LXCFS, gVisor), or memory is outside every node)\n", humanBytes(nodes))
		}
	}
	for _, row := range settingRows {
		var parts []string
		for _, name := range row {
			if v, ok := s.Sysctls[name]; ok {
				parts = append(parts, name[strings.LastIndex(name, ".")+1:]+" "+v)
			}
		}
		if len(parts) > 0 {
			sw.printf("  %s\n", strings.Join(parts, "; "))
		}
	}
	sw.printf("  irqbalance %s\n", irqbalanceLine(s.Irqbalance))
	var parts []string
	if len(s.Softnet) > 0 {
		processed, dropped, squeezed := softnetTotals(s.Softnet)
		parts = append(parts, fmt.Sprintf("softnet processed %d, dropped %d, time_squeeze %d", processed, dropped, squeezed))
	}
	if x := s.Net.TcpExt; x != nil {
		parts = append(parts, fmt.Sprintf("ListenOverflows %d, ListenDrops %d", x["ListenOverflows"], x["ListenDrops"]))
	}
	if len(parts) == 0 {
		parts = append(parts, "softnet and TCP counters unknown (no /proc/net/softnet_stat or netstat here)")
	}
	sw.printf("  %s\n", strings.Join(parts, "; "))
}

func irqbalanceLine(ib Irqbalance) string {
	state := "not running"
	if ib.ProcessesSeen == 0 && !ib.Running {
		state = "unknown (no process list here)"
	}
	if ib.Running {
		state = fmt.Sprintf("running (pid %s)", joinInts(ib.PIDs))
	}
	if ib.EnabledAtBoot {
		state += ", enabled at boot"
	}
	if ib.ConfigPath != "" {
		state += ", config " + ib.ConfigPath
	}
	if ib.BannedCPUs != nil && !ib.BannedCPUs.IsEmpty() {
		state += ", banned CPUs " + ib.BannedCPUs.String()
	}
	if len(ib.BannedIRQs) > 0 {
		state += ", banned IRQs " + joinInts(ib.BannedIRQs)
	}
	return state
}

func (sw *summaryWriter) errors() {
	if len(sw.s.Errors) == 0 {
		return
	}
	sw.printf("\nNot read (%d):\n", len(sw.s.Errors))
	for _, e := range sw.s.Errors {
		sw.printf("  %s: %s\n", e.Source, e.Error)
	}
}

func setStr(s *CPUSet) string {
	if s == nil {
		return "-"
	}
	if s.IsEmpty() {
		return "none"
	}
	return s.String()
}

func joinInts(v []int) string {
	if len(v) == 0 {
		return "-"
	}
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func joinHostPort(addr string, port int) string {
	if strings.Contains(addr, ":") {
		return fmt.Sprintf("[%s]:%d", addr, port)
	}
	return fmt.Sprintf("%s:%d", addr, port)
}

func limitStr(v int64) string {
	if v < 0 {
		return "unlimited"
	}
	return strconv.FormatInt(v, 10)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// humanBytes prints bytes in binary units ("1.2 GiB").
func humanBytes(b uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, i := float64(b), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", b)
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

func sortedIntKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}
