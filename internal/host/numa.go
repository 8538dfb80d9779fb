package host

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// NUMA nodes live in /sys/devices/system/node:
//
//	online           0-3
//	node1/cpulist    32-63
//	node1/distance   16 10 12 ...
//	node1/meminfo    Node 1 MemTotal:       132070720 kB
//	                 Node 1 MemFree:        127001668 kB
func readNUMA(r *reader) error {
	const base = "/sys/devices/system/node"
	n := &r.snap.NUMA
	n.Online, _ = r.cpuList(base + "/online")
	for _, id := range numbered(r.dir(base), "node") {
		node := Node{ID: id}
		dir := fmt.Sprintf("%s/node%d", base, id)
		if cpus, ok := r.cpuList(dir + "/cpulist"); ok {
			node.CPUs = *cpus
		}
		if data, ok := r.file(dir + "/meminfo"); ok {
			mi, err := parseNodeMeminfo(data)
			if err != nil {
				r.fail(inFile(err, dir+"/meminfo"))
			}
			node.MemTotal, node.MemFree = mi["MemTotal"], mi["MemFree"]
		}
		if s, ok := r.str(dir + "/distance"); ok {
			d, err := parseInts(s)
			if err != nil {
				r.fail(&ParseError{Path: dir + "/distance", Line: 1, Err: err})
			}
			node.Distances = d
		}
		for _, c := range node.CPUs.CPUs() {
			r.nodeOf[c] = id
		}
		n.Nodes = append(n.Nodes, node)
	}
	return nil
}

// parseNodeMeminfo reads a node's meminfo ("Node 0 MemTotal: 4286668 kB")
// into bytes by field name.
func parseNodeMeminfo(data []byte) (map[string]*uint64, error) {
	out := map[string]*uint64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 4 || f[0] != "Node" {
			return out, lineErr(line, "want \"Node N Field: value [kB]\", got %q", sc.Text())
		}
		v, err := strconv.ParseUint(f[3], 10, 64)
		if err != nil {
			return out, lineErr(line, "value %q: %w", f[3], err)
		}
		if len(f) > 4 && f[4] == "kB" {
			v *= 1024
		}
		out[strings.TrimSuffix(f[2], ":")] = &v
	}
	return out, nil
}

// parseInts reads whitespace-separated integers.
func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Fields(s) {
		v, err := strconv.Atoi(f)
		if err != nil {
			return out, fmt.Errorf("%q is not an integer", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// NodeOfCPU returns the NUMA node of cpu.
func (s *Snapshot) NodeOfCPU(cpu int) (int, bool) {
	for _, n := range s.NUMA.Nodes {
		if n.CPUs.Contains(cpu) {
			return n.ID, true
		}
	}
	return 0, false
}

// NodeCPUs returns the CPUs of NUMA node id (empty if there is no such node).
func (s *Snapshot) NodeCPUs(id int) CPUSet {
	for _, n := range s.NUMA.Nodes {
		if n.ID == id {
			return n.CPUs.Clone()
		}
	}
	return CPUSet{}
}

// NodesOf returns the NUMA nodes that the CPUs of set belong to, ascending.
func (s *Snapshot) NodesOf(set CPUSet) []int {
	var out []int
	for _, n := range s.NUMA.Nodes {
		if !n.CPUs.Intersect(set).IsEmpty() {
			out = append(out, n.ID)
		}
	}
	return out
}
