package tune

import (
	"fmt"
	"strconv"

	"redline/internal/change"
	"redline/internal/host"
	"redline/internal/placement"
)

// buildMemory applies the memory settings Redis itself warns about at
// start-up (checks.md section 0 and 3).
func buildMemory(pc *planContext) error {
	snap := pc.in.Host
	if v, ok := snap.Sysctls["vm.overcommit_memory"]; ok && v != "1" {
		pc.add("memory", change.Change{Kind: change.KindSysctl, Target: "vm.overcommit_memory", Value: "1",
			Why: "Redis warns unless it is 1: BGSAVE and replication fork() can fail under the heuristic"})
	}
	if snap.THP != nil {
		thp := map[string]string{"enabled": snap.THP.Enabled, "defrag": snap.THP.Defrag}
		for _, f := range []string{"enabled", "defrag"} {
			if thp[f] == "always" {
				pc.add("memory", change.Change{Kind: change.KindFile, Target: "/sys/kernel/mm/transparent_hugepage/" + f, Value: "madvise",
					Why: "THP " + f + "=always: fork copy-on-write latency and memory (Redis's own warning suggests madvise); restart Redis to drop huge pages it has"})
			}
		}
	}
	if len(snap.NUMA.Nodes) > 1 && snap.Sysctls["kernel.numa_balancing"] == "1" {
		pc.add("memory", change.Change{Kind: change.KindSysctl, Target: "kernel.numa_balancing", Value: "0",
			Why: "NUMA hinting faults and page migration stall the Redis main thread (GitLab production incident 7660)"})
	}
	if v, ok := snap.Sysctls["vm.zone_reclaim_mode"]; ok && v != "0" {
		pc.add("memory", change.Change{Kind: change.KindSysctl, Target: "vm.zone_reclaim_mode", Value: "0",
			Why: "vm.rst: leave zone reclaim off for cache-like workloads"})
	}
	return nil
}

// redisSettings are the run-time settings the redis-config profile sets:
// each is mutable (CONFIG SET), safe for data, and cuts main-thread stalls.
var redisSettings = []struct{ name, value, why string }{
	{"lazyfree-lazy-eviction", "yes", "free evicted keys in a background thread, not on the main thread"},
	{"lazyfree-lazy-expire", "yes", "free expired keys in a background thread"},
	{"lazyfree-lazy-server-del", "yes", "implicit deletes (RENAME, SET over a big key) free in the background"},
	{"lazyfree-lazy-user-del", "yes", "DEL behaves like UNLINK: big keys are freed in the background"},
	{"replica-lazy-flush", "yes", "a replica's full resync flushes its old data in the background"},
	{"latency-monitor-threshold", "100", "record events over 100 ms so LATENCY DOCTOR has data (0 disables it)"},
}

// buildRedisConfig sets the run-time settings, and says what needs a
// restart instead (io-threads, tcp-backlog are immutable).
func buildRedisConfig(pc *planContext) error {
	if pc.in.Redis == nil || pc.in.Redis.Addr == "" {
		return fmt.Errorf("the redis-config profile needs the server's address (--redis HOST:PORT)")
	}
	for _, s := range redisSettings {
		pc.add("redis-config", change.Change{Kind: change.KindRedisConfig, Target: s.name, Value: s.value, Why: s.why})
	}
	proc, err := pc.pickRedis()
	if err != nil || proc == nil {
		return err
	}
	pc.ioThreadsNote(proc)
	return nil
}

// ioThreadsNote sizes io-threads from the CPUs Redis may use (its cgroup
// cpuset and affinity, not nproc), leaving one for the main thread.
func (pc *planContext) ioThreadsNote(p *host.Process) {
	cpus := processCPUs(p)
	if p.Cgroup != nil && p.Cgroup.CPUs != nil {
		cpus = cpus.Intersect(*p.Cgroup.CPUs)
	}
	n := cpus.Len()
	if n < 4 {
		return
	}
	suggest := min(n-1, 8)
	pc.note("Redis may use %d CPUs: io-threads %d in redis.conf (immutable: restart Redis) if the main thread is saturated; more than 8 rarely helps", n, suggest)
}

// rfsEntries is rps_sock_flow_entries (scaling.rst: 32768 "works fairly
// well").
const rfsEntries = 32768

// buildRPSXPS spreads receive processing over the NIC's local CPUs when it
// has fewer RX queues than them (clearing RPS where it is redundant), turns
// on RFS with it, and maps each CPU to one TX queue.
func buildRPSXPS(pc *planContext) error {
	nic, err := pc.pickNIC()
	if err != nil {
		return err
	}
	local, _, err := pc.nicCPUs(nic)
	if err != nil {
		return err
	}
	rps := pc.rpsCPUs(local)
	redundant := len(nic.RxQueues) >= local.Len()
	if !redundant && !pc.irqCPU.IsEmpty() && rps.IsSubsetOf(pc.irqCPU) {
		pc.note("RPS left alone: the only CPUs it could use (%s) already take %s's IRQs, so it would move nothing", rps.List(), nic.Name)
		rps = host.CPUSet{}
	}
	for _, q := range nic.RxQueues {
		pc.rpsQueue(nic, q, rps, local.Len(), redundant)
	}
	if !redundant && !rps.IsEmpty() && len(nic.RxQueues) > 0 {
		pc.rfs(nic)
	}
	return pc.xps(nic)
}

// rpsCPUs are the local CPUs without Redis's main and io thread CPUs (the
// ones numa-bind gives it, when it runs too), so packet processing does
// not steal their cycles; all local CPUs if that leaves none.
func (pc *planContext) rpsCPUs(local host.CPUSet) host.CPUSet {
	procs, _ := pc.redisServers()
	if len(procs) == 0 {
		return local
	}
	busy := pc.bindTo
	if busy.IsEmpty() {
		busy, _ = placement.ConfiguredCPUs(pc.in.Host, procs)
	}
	if rest := local.Difference(busy); !rest.IsEmpty() {
		return rest
	}
	return local
}

func (pc *planContext) rpsQueue(nic *host.NIC, q host.RxQueue, cpus host.CPUSet, local int, redundant bool) {
	if q.RPSUnsupported || q.RPSCPUs == nil || (!redundant && cpus.IsEmpty()) {
		return
	}
	target := fmt.Sprintf("/sys/class/net/%s/queues/rx-%d/rps_cpus", nic.Name, q.Index)
	switch {
	case redundant && !q.RPSCPUs.IsEmpty():
		pc.add("rps-xps", change.Change{Kind: change.KindFile, Target: target, Value: "0",
			Why: "one RX queue per local CPU already: RPS only adds an inter-processor interrupt per packet"})
	case !redundant:
		pc.add("rps-xps", change.Change{Kind: change.KindFile, Target: target, Value: cpus.Mask(),
			Why: fmt.Sprintf("%d RX queue(s) for %d local CPUs: spread packet processing over CPUs %s, local to the NIC, away from Redis's main thread", len(nic.RxQueues), local, cpus.List())})
	}
}

// rfs steers packets to the CPU of the consuming thread: both the global
// table and the per-queue counts must be set (scaling.rst).
func (pc *planContext) rfs(nic *host.NIC) {
	if cur, ok := pc.in.Host.Sysctls.Int("net.core.rps_sock_flow_entries"); ok && cur < rfsEntries {
		pc.add("rps-xps", change.Change{Kind: change.KindSysctl, Target: "net.core.rps_sock_flow_entries", Value: strconv.Itoa(rfsEntries),
			Why: "RFS global flow table (scaling.rst: 32768 works fairly well)"})
	}
	per := rfsEntries / len(nic.RxQueues)
	for _, q := range nic.RxQueues {
		if q.RPSUnsupported || q.RPSFlowCnt == nil || *q.RPSFlowCnt >= per {
			continue
		}
		pc.add("rps-xps", change.Change{Kind: change.KindFile, Target: fmt.Sprintf("/sys/class/net/%s/queues/rx-%d/rps_flow_cnt", nic.Name, q.Index),
			Value: strconv.Itoa(per), Why: fmt.Sprintf("RFS per-queue table: %d entries / %d queues", rfsEntries, len(nic.RxQueues))})
	}
}

// xps writes the maps placement.XPS computes (the same maps doctor's xps
// fix writes): each CPU local to the NIC sends on the TX queue whose IRQs
// irq-local places on it or its core. Queues already mapped so are left
// alone.
func (pc *planContext) xps(nic *host.NIC) error {
	in, err := pc.placementInput(nic)
	if err != nil {
		return err
	}
	m, ok := placement.XPS(in)
	if !ok {
		pc.note("%s has no multi-queue XPS to set (single TX queue, or xps_cpus absent)", nic.Name)
		return nil
	}
	for _, n := range m.Notes {
		pc.note("%s", n)
	}
	changed := false
	for _, q := range nic.TxQueues {
		set, ok := m.Maps[q.Index]
		if !ok || q.XPSCPUs != nil && set.Equal(*q.XPSCPUs) {
			continue
		}
		changed = true
		pc.add("rps-xps", change.Change{Kind: change.KindFile, Target: fmt.Sprintf("/sys/class/net/%s/queues/tx-%d/xps_cpus", nic.Name, q.Index),
			Value: set.Mask(), Why: fmt.Sprintf("tx-%d is sent on from CPUs %s", q.Index, set.List())})
	}
	if !changed {
		pc.note("%s's XPS already maps each local CPU to its queue: left alone", nic.Name)
	}
	return nil
}
