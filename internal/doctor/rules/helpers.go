package rules

import (
	"fmt"
	"sort"
	"strings"

	"redline/internal/doctor"
	"redline/internal/host"
)

// redisPid returns the server's pid for commands, or "PID".
func redisPid(f *doctor.Facts) string {
	if p := f.RedisProcess(); p != nil {
		return fmt.Sprint(p.PID)
	}
	return "PID"
}

// irqCPUs returns where an IRQ is delivered: its effective affinity when
// the kernel reports one, else its affinity list.
func irqCPUs(irq *host.IRQ) (host.CPUSet, string, bool) {
	if irq == nil {
		return host.CPUSet{}, "", false
	}
	if irq.Effective != nil && !irq.Effective.IsEmpty() {
		return *irq.Effective, fmt.Sprintf("/proc/irq/%d/effective_affinity_list", irq.Number), true
	}
	if irq.Affinity != nil {
		return *irq.Affinity, fmt.Sprintf("/proc/irq/%d/smp_affinity_list", irq.Number), true
	}
	return host.CPUSet{}, "", false
}

// noTopology is the not-checked result of a rule that needs the NUMA
// topology on a tree that lacks it.
func noTopology(f *doctor.Facts) (doctor.Result, bool) {
	if why := f.TopologyMissing(); why != "" {
		return doctor.Unchecked("%s", why), true
	}
	return doctor.Result{}, false
}

// absentSysctl is the result for a sysctl the snapshot lacks: the kernel
// does not have it when the tree holds other sysctls of /proc/sys (then
// kernelLacks says what that means), else the tree did not capture
// /proc/sys and nothing is known.
func absentSysctl(f *doctor.Facts, name, kernelLacks string) doctor.Result {
	if len(f.Host.Sysctls) == 0 {
		return doctor.Unchecked("%s is absent from this tree, which has no /proc/sys", name)
	}
	return doctor.Skip("%s", kernelLacks)
}

// queueIRQList is the NIC's queue IRQ numbers, "101,102".
func queueIRQList(n *host.NIC) string {
	xs := make([]int, 0, len(n.QueueIRQs))
	for _, q := range n.QueueIRQs {
		xs = append(xs, q.IRQ)
	}
	return joinInts(xs)
}

// affinityUnion is every CPU a queue IRQ of n may be delivered to.
func affinityUnion(f *doctor.Facts, n *host.NIC) host.CPUSet {
	u := host.NewCPUSet()
	for _, q := range n.QueueIRQs {
		if cpus, _, ok := irqCPUs(f.IRQ(q.IRQ)); ok {
			u = u.Union(cpus)
		}
	}
	return u
}

// nicNode returns the NIC's NUMA node when the firmware says which.
func nicNode(n *host.NIC) (int, bool) {
	if n.NUMANode == nil || *n.NUMANode < 0 {
		return 0, false
	}
	return *n.NUMANode, true
}

// nicNodeCPUs returns the CPUs local to the NIC: local_cpulist, else its
// node's CPUs.
func nicNodeCPUs(f *doctor.Facts, n *host.NIC) (host.CPUSet, bool) {
	if n.LocalCPUs != nil && !n.LocalCPUs.IsEmpty() {
		return *n.LocalCPUs, true
	}
	if node, ok := nicNode(n); ok {
		return f.NodeCPUs(node)
	}
	return host.CPUSet{}, false
}

// nodeEv is the evidence for a NIC's node.
func nodeEv(n *host.NIC) doctor.Evidence {
	src := n.NUMANodeFrom
	if src == "" {
		src = "/sys/class/net/" + n.Name + "/device/numa_node"
	}
	v := "absent"
	if n.NUMANode != nil {
		v = fmt.Sprint(*n.NUMANode)
	}
	return doctor.Ev(src, v)
}

// physicalCores counts the distinct cores among cpus (hardware threads of
// one core count once).
func physicalCores(f *doctor.Facts, cpus host.CPUSet) int {
	seen := map[string]bool{}
	for _, c := range f.Host.CPU.CPUs {
		if !c.Online || !cpus.Contains(c.ID) {
			continue
		}
		key := fmt.Sprint(c.ID)
		if c.Core != nil && c.Package != nil {
			key = fmt.Sprintf("%d/%d", *c.Package, *c.Core)
		}
		seen[key] = true
	}
	return len(seen)
}

// netRxByCPU returns the NET_RX softirq counts per CPU of a snapshot.
func netRxByCPU(s *host.Snapshot) map[int]uint64 {
	out := map[int]uint64{}
	if s == nil || s.Softirqs == nil {
		return out
	}
	counts := s.Softirqs.Counts["NET_RX"]
	for i, c := range counts {
		if i < len(s.Softirqs.CPUs) {
			out[s.Softirqs.CPUs[i]] = c
		}
	}
	return out
}

// netRxShare returns, per CPU, the NET_RX softirqs in the sample window
// (or since boot), and the total.
func netRxShare(f *doctor.Facts) (map[int]uint64, uint64) {
	cur, prev := netRxByCPU(f.Host), netRxByCPU(f.Prev)
	var total uint64
	for cpu, c := range cur {
		if f.Prev != nil {
			// a rate or nothing: a CPU the first sample lacks (or whose
			// count fell) has no rate, and its total is not one
			p, ok := prev[cpu]
			if !ok || c < p {
				delete(cur, cpu)
				continue
			}
			c -= p
		}
		cur[cpu] = c
		total += c
	}
	return cur, total
}

// hottestNetRx returns the CPU with the most NET_RX softirqs and its share.
func hottestNetRx(f *doctor.Facts) (cpu int, share float64, total uint64) {
	per, total := netRxShare(f)
	best := uint64(0)
	cpu = -1
	for c, n := range per {
		if n > best || n == best && c < cpu {
			cpu, best = c, n
		}
	}
	if total == 0 {
		return -1, 0, 0
	}
	return cpu, float64(best) / float64(total), total
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

func sortInts(xs []int) { sort.Ints(xs) }

func isPowerOfTwo(n int64) bool { return n > 0 && n&(n-1) == 0 }

// tcpExt returns a getter of a TcpExt counter of the host's namespace.
func tcpExt(name string) func(*host.Snapshot) (uint64, bool) {
	return func(s *host.Snapshot) (uint64, bool) {
		if s == nil || s.Net.TcpExt == nil {
			return 0, false
		}
		v, ok := s.Net.TcpExt[name]
		return v, ok
	}
}

// affinityList returns an IRQ's smp_affinity_list, "" when unknown.
func affinityList(irq *host.IRQ) string {
	if irq == nil || irq.Affinity == nil {
		return ""
	}
	return irq.Affinity.List()
}

// nicFindings keeps the first NIC's finding of a per-NIC rule (its
// evidence and fix) and notes every other NIC where the rule fires too, so
// that a host with two misplaced NICs shows both.
type nicFindings struct {
	first  *doctor.Result
	others []string
}

func (nf *nicFindings) add(r doctor.Result) {
	if nf.first == nil {
		nf.first = &r
		return
	}
	nf.others = append(nf.others, r.Message)
}

// result is the first finding with the others noted; ok is false when
// no NIC fired.
func (nf *nicFindings) result() (doctor.Result, bool) {
	if nf.first == nil {
		return doctor.Result{}, false
	}
	r := *nf.first
	for _, m := range nf.others {
		r = r.Note("also: %s (run with --nic to see its evidence and fix)", m)
	}
	return r, true
}

// withInferred labels a NIC rule's result when a NIC it judged was not
// read from /sys/class/net but inferred from /proc/interrupts' IRQ names
// (host.NIC.Inferred): the reader must know the NIC, its queues and its
// driver are the names' word, wherever the finding is shown.
func withInferred(check func(*doctor.Facts) doctor.Result) func(*doctor.Facts) doctor.Result {
	return func(f *doctor.Facts) doctor.Result {
		r := check(f)
		for _, n := range f.TargetNICs() {
			if n.Inferred != "" {
				r = r.Note("%s is inferred %s", n.Name, n.Inferred)
			}
		}
		return r
	}
}
