package host

import (
	"fmt"
	"slices"
)

// CPUs live in /sys/devices/system/cpu:
//
//	online, possible, present, isolated   0-127 (cpulists; isolated may be empty)
//	nohz_full                              (absent without CONFIG_NO_HZ_FULL)
//	smt/active                             1
//	cpu5/topology/physical_package_id      0
//	cpu5/topology/die_id                   0
//	cpu5/topology/cluster_id               1
//	cpu5/topology/core_id                  5
//	cpu5/topology/thread_siblings_list     5,69
func readCPUs(r *reader) error {
	const base = "/sys/devices/system/cpu"
	t := &r.snap.CPU
	t.Online, _ = r.cpuList(base + "/online")
	t.Possible, _ = r.cpuList(base + "/possible")
	t.Present, _ = r.cpuList(base + "/present")
	t.Isolated, _ = r.cpuList(base + "/isolated")
	t.NohzFull, _ = r.cpuList(base + "/nohz_full")
	if v, ok := r.int(base + "/smt/active"); ok {
		b := *v == 1
		t.SMTActive = &b
	}
	for _, id := range cpuIDs(r, base, t.Possible) {
		t.CPUs = append(t.CPUs, readCPU(r, base, id, t.Online))
	}
	t.Packages, t.Cores, t.Threads = countTopology(t.CPUs)
	return nil
}

// cpuIDs lists the possible CPUs, or the cpuN directories if the kernel
// has no possible list.
func cpuIDs(r *reader, base string, possible *CPUSet) []int {
	if possible != nil {
		return possible.CPUs()
	}
	return numbered(r.dir(base), "cpu")
}

func readCPU(r *reader, base string, id int, online *CPUSet) CPU {
	c := CPU{ID: id, Online: online == nil || online.Contains(id)}
	if node, ok := r.nodeOf[id]; ok {
		c.Node = intPtr(node)
	}
	if !c.Online {
		return c // offline CPUs have no topology
	}
	dir := fmt.Sprintf("%s/cpu%d/topology", base, id)
	c.Package, _ = r.int(dir + "/physical_package_id")
	c.Die, _ = r.int(dir + "/die_id")
	c.Cluster, _ = r.int(dir + "/cluster_id")
	c.Core, _ = r.int(dir + "/core_id")
	c.Siblings, _ = r.cpuList(dir + "/thread_siblings_list")
	c.LLC = readLLC(r, base, id)
	return c
}

// countTopology counts the online CPUs' packages, physical cores and
// hardware threads.
func countTopology(cpus []CPU) (packages, cores, threads int) {
	type coreKey struct{ pkg, die, core int }
	pkgs, coreSet := map[int]bool{}, map[coreKey]bool{}
	for _, c := range cpus {
		if !c.Online {
			continue
		}
		threads++
		pkg, die, core := deref(c.Package, 0), deref(c.Die, 0), deref(c.Core, c.ID)
		pkgs[pkg] = true
		coreSet[coreKey{pkg, die, core}] = true
	}
	return len(pkgs), len(coreSet), threads
}

func deref(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// CPUByID returns the CPU with the given number, or nil.
func (s *Snapshot) CPUByID(id int) *CPU {
	for i := range s.CPU.CPUs {
		if s.CPU.CPUs[i].ID == id {
			return &s.CPU.CPUs[i]
		}
	}
	return nil
}

// SpreadOrder orders the CPUs of set for placing one thing per CPU: the
// first hardware thread of every physical core first (cores in CPU order),
// then the second threads, and so on, so that SMT siblings are used only
// once every core has one. CPUs without topology come last, in order.
func (s *Snapshot) SpreadOrder(set CPUSet) []int {
	rank := map[int]int{} // CPU -> its position among its core's threads
	for _, c := range s.CPU.CPUs {
		if c.Siblings == nil || !set.Contains(c.ID) {
			continue
		}
		rank[c.ID] = slices.Index(c.Siblings.Intersect(set).CPUs(), c.ID)
	}
	cpus := set.CPUs()
	slices.SortStableFunc(cpus, func(a, b int) int {
		ra, oka := rank[a]
		rb, okb := rank[b]
		switch {
		case oka != okb:
			if oka {
				return -1
			}
			return 1
		case ra != rb:
			return ra - rb
		}
		return a - b
	})
	return cpus
}
