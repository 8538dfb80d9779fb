package steer

import (
	"fmt"
	"sort"

	"redline/internal/host"
)

// topoIndex answers the engine's questions about CPUs.
type topoIndex struct {
	cpu   map[int]TopoCPU
	nodes map[int][]int // node -> CPUs, ascending
	redis map[int]bool  // cores (TopoCPU.Core) running a Redis thread
	word  string        // "node" or "LLC", for reasons
}

func newTopoIndex(t Topology, redisCPUs host.CPUSet) topoIndex {
	ix := topoIndex{cpu: map[int]TopoCPU{}, nodes: map[int][]int{}, redis: map[int]bool{}, word: t.domainWord()}
	for _, c := range t.CPUs {
		ix.cpu[c.ID] = c
		ix.nodes[c.Node] = append(ix.nodes[c.Node], c.ID)
	}
	for _, cpus := range ix.nodes {
		sort.Ints(cpus)
	}
	for _, id := range redisCPUs.CPUs() {
		if c, ok := ix.cpu[id]; ok {
			ix.redis[c.Core] = true
		}
	}
	return ix
}

// misplaced says why an IRQ delivered on cpus is not well placed for
// node, or "" when it is; redisOnly is true when the only fault is
// sitting on a core of redis-server.
func (ix topoIndex) misplaced(cpus host.CPUSet, node int) (why string, redisOnly bool) {
	if cpus.IsEmpty() {
		return "its affinity is unknown", false
	}
	for _, id := range cpus.CPUs() {
		c, ok := ix.cpu[id]
		if !ok || c.Node != node {
			return fmt.Sprintf("its IRQ is on CPU %s", cpus.List()), false
		}
	}
	if ix.onRedisCore(cpus) && ix.freeOf(node) {
		return fmt.Sprintf("its IRQ is on CPU %s, a core of redis-server", cpus.List()), true
	}
	return "", false
}

// onRedisCore says whether an IRQ delivered on cpus sits on a core of
// redis-server.
func (ix topoIndex) onRedisCore(cpus host.CPUSet) bool {
	if cpus.Len() != 1 {
		return false
	}
	c, ok := ix.cpu[cpus.CPUs()[0]]
	return ok && ix.redis[c.Core]
}

// freeOf says whether node has a core without a Redis thread.
func (ix topoIndex) freeOf(node int) bool {
	for _, id := range ix.nodes[node] {
		if !ix.redis[ix.cpu[id].Core] {
			return true
		}
	}
	return false
}

// claims tracks the CPUs and cores queue IRQs occupy this period.
type claims struct {
	ix    topoIndex
	cpus  map[int]int // CPU -> queue IRQs on it
	cores map[int]int // core -> queue IRQs on it
}

func newClaims(ix topoIndex) *claims {
	return &claims{ix: ix, cpus: map[int]int{}, cores: map[int]int{}}
}

// take records an IRQ that stays where it is (only a single-CPU
// placement occupies a core).
func (c *claims) take(cpus host.CPUSet) {
	if cpus.Len() != 1 {
		return
	}
	c.claim(cpus.CPUs()[0])
}

func (c *claims) claim(cpu int) {
	c.cpus[cpu]++
	if tc, ok := c.ix.cpu[cpu]; ok {
		c.cores[tc.Core]++
	}
}

// rank orders candidate CPUs, lowest first: Redis's cores last, then
// cores and CPUs already serving a queue, then the busier.
type rank struct {
	redis, coreTaken, cpuTaken int
	busy                       float64
	id                         int
}

func (a rank) less(b rank) bool {
	switch {
	case a.redis != b.redis:
		return a.redis < b.redis
	case a.coreTaken != b.coreTaken:
		return a.coreTaken < b.coreTaken
	case a.cpuTaken != b.cpuTaken:
		return a.cpuTaken < b.cpuTaken
	case a.busy != b.busy:
		return a.busy < b.busy
	}
	return a.id < b.id
}

// place picks the best CPU of w's node and claims it.
func (c *claims) place(w wanted, busy map[int]float64) (Move, bool) {
	var best *rank
	for _, id := range c.ix.nodes[w.node] {
		r := rank{coreTaken: c.cores[c.ix.cpu[id].Core], cpuTaken: c.cpus[id], busy: busy[id], id: id}
		if c.ix.redis[c.ix.cpu[id].Core] {
			r.redis = 1
		}
		if best == nil || r.less(*best) {
			best = &r
		}
	}
	if best == nil {
		return Move{}, false
	}
	cur := w.q.on()
	if cur.Len() == 1 && cur.Contains(best.id) {
		return Move{}, false // already where the best choice is
	}
	c.claim(best.id)
	why := w.why
	if best.redis > 0 {
		why += "; only redis-server's cores are left in the " + c.ix.word
	} else if best.coreTaken > 0 {
		why += "; no free core left in the " + c.ix.word + ", sharing one"
	}
	return Move{IRQ: w.q.IRQ, Queue: w.q.Queue, From: w.q.Affinity, To: best.id, Node: w.node, Reason: why}, true
}
