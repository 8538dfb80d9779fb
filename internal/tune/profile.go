package tune

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"redline/internal/change"
	"redline/internal/host"
	"redline/internal/placement"
)

// PlanInput is what the planner knows about the machine and what the user
// chose.
type PlanInput struct {
	Host *host.Snapshot
	// NIC is the interface that carries Redis traffic; empty picks the one
	// physical NIC that is up (an error when there are several).
	NIC string
	// PID is the Redis server; 0 picks the one Redis process in the
	// snapshot (an error when there are several).
	PID int
	// NICNode overrides the NIC's NUMA node. It is needed when the
	// firmware reports -1 on a machine with several nodes: redline does
	// not guess (Intel's script silently takes node 0).
	NICNode *int
	// KeepIrqbalance leaves a running irqbalance alone and reports that it
	// will move the pinned IRQs back, instead of stopping it (journaled).
	KeepIrqbalance bool
	// Redis is where redis-config changes go.
	Redis *PlanRedis
}

// Profile is a named set of changes built from the host model.
type Profile struct {
	Name    string
	Summary string
	build   func(pc *planContext) error
}

// profiles run in this order whatever order the user names them in:
// irq-local must stop irqbalance before its writes and decide the IRQ CPUs
// that numa-bind and rps-xps keep Redis and RPS away from.
var profiles = []Profile{
	{"net-sysctl", "raise listen and SYN backlogs, the NIC backlog and budget, widen the local port range (never lowers a value)", buildNetSysctl},
	{"memory", "overcommit_memory=1, THP to madvise, no NUMA balancing on multi-node hosts (Redis's own checks)", buildMemory},
	{"redis-config", "run-time Redis settings: lazy freeing, latency monitor; advice for settings that need a restart", buildRedisConfig},
	{"irq-local", "one CPU per NIC queue IRQ on the NIC's NUMA node, physical cores first, never on Redis's main or io-thread CPUs", buildIRQLocal},
	{"numa-bind", "move every Redis thread onto the NIC's NUMA node (off the IRQ CPUs when irq-local runs too)", buildNUMABind},
	{"rps-xps", "RPS/RFS when the NIC has fewer RX queues than local CPUs, XPS one TX queue per CPU", buildRPSXPS},
}

// ProfileNames lists the profile names.
func ProfileNames() []string {
	out := make([]string, len(profiles))
	for i, p := range profiles {
		out[i] = p.Name
	}
	return out
}

// planContext carries one planning run: the input, what was chosen, and
// decisions later profiles build on.
type planContext struct {
	in     PlanInput
	want   map[string]bool
	plan   *Plan
	nic    *host.NIC
	proc   *host.Process
	irqCPU host.CPUSet // CPUs irq-local gave to queue IRQs
	bindTo host.CPUSet // CPUs numa-bind gives Redis
}

// PlanProfiles builds a plan from the named profiles. A profile that
// cannot be planned on this host fails the whole plan with an error that
// says what to pass; a profile with nothing to do adds a note.
func PlanProfiles(in PlanInput, names ...string) (*Plan, error) {
	if in.Host == nil {
		return nil, errors.New("planning profiles needs a host snapshot")
	}
	pc := &planContext{in: in, want: map[string]bool{}, plan: &Plan{Version: PlanVersion, Host: in.Host.Hostname, Redis: in.Redis}}
	for _, n := range names {
		if !slices.Contains(ProfileNames(), n) {
			return nil, fmt.Errorf("unknown profile %q (known: %s)", n, strings.Join(ProfileNames(), ", "))
		}
		pc.want[n] = true
	}
	for _, p := range profiles {
		if !pc.want[p.Name] {
			continue
		}
		pc.plan.Sources = append(pc.plan.Sources, "profile:"+p.Name)
		if err := p.build(pc); err != nil {
			return nil, fmt.Errorf("profile %s: %w", p.Name, err)
		}
	}
	if !pc.needsRedis() {
		pc.plan.Redis = nil
	}
	return pc.plan, pc.plan.Validate()
}

func (pc *planContext) needsRedis() bool {
	for _, c := range pc.plan.Changes {
		if c.Kind == change.KindRedisConfig {
			return true
		}
	}
	return false
}

func (pc *planContext) add(rule string, c change.Change) {
	c.Rule = rule
	pc.plan.Changes = append(pc.plan.Changes, c)
}

// note adds a note once: several profiles may notice the same thing.
func (pc *planContext) note(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	if !slices.Contains(pc.plan.Notes, n) {
		pc.plan.Notes = append(pc.plan.Notes, n)
	}
}

// pickNIC returns the NIC Redis traffic uses: the one named, or the only
// physical NIC that is up.
func (pc *planContext) pickNIC() (*host.NIC, error) {
	if pc.nic != nil {
		return pc.nic, nil
	}
	snap := pc.in.Host
	if pc.in.NIC != "" {
		if n := snap.NIC(pc.in.NIC); n != nil {
			pc.nic = n
			return n, nil
		}
		return nil, fmt.Errorf("no NIC named %q on this host (see redline inspect)", pc.in.NIC)
	}
	var up []*host.NIC
	for i := range snap.NICs {
		n := &snap.NICs[i]
		if !n.Virtual && n.OperState == "up" {
			up = append(up, n)
		}
	}
	switch len(up) {
	case 0:
		return nil, errors.New("no physical NIC is up; name the one Redis uses with --nic")
	case 1:
		pc.nic = up[0]
		pc.note("NIC %s (driver %s) carries Redis traffic (the only physical NIC that is up; --nic to choose)", up[0].Name, up[0].Driver)
		return up[0], nil
	}
	names := make([]string, len(up))
	for i, n := range up {
		names[i] = n.Name
	}
	return nil, fmt.Errorf("several NICs are up (%s); name the one Redis uses with --nic", strings.Join(names, ", "))
}

// pickRedis returns the Redis process: the pid given, else the one the
// plan's --redis address reaches from here, else the only one. nil
// without error when there is none and none was asked for. A --pid that
// is not the server at --redis is refused: its CPUs and namespace would
// be planned for another server's settings.
func (pc *planContext) pickRedis() (*host.Process, error) {
	if pc.proc != nil {
		return pc.proc, nil
	}
	snap := pc.in.Host
	at, addr, err := pc.serverAtRedis()
	if err != nil {
		return nil, err
	}
	if pc.in.PID != 0 {
		p := snap.Process(pc.in.PID)
		if p == nil {
			return nil, fmt.Errorf("pid %d is not a Redis process in the snapshot (is it running? pass the server's pid)", pc.in.PID)
		}
		switch {
		case at != nil && at.PID != p.PID:
			return nil, fmt.Errorf("pid %d is not the server at %s (that is pid %d): give one of --pid and --redis, or both of one server", p.PID, addr, at.PID)
		case at == nil && addr != "":
			return nil, fmt.Errorf("pid %d is not the server at %s (%s): give one of --pid and --redis, or both of one server", p.PID, addr, serversList(&host.Snapshot{Processes: []host.Process{*p}}))
		}
		pc.proc = p
		return p, nil
	}
	if at != nil {
		pc.proc = at
		return at, nil
	}
	switch len(snap.Processes) {
	case 0:
		return nil, nil
	case 1:
		if addr == "" {
			pc.proc = &snap.Processes[0]
			return pc.proc, nil
		}
	}
	if addr != "" {
		return nil, fmt.Errorf("no redis-server in this network namespace listens on %s (%s)", addr, serversList(snap))
	}
	return nil, fmt.Errorf("several Redis processes (%s); choose one with --redis HOST:PORT or --pid", serversList(snap))
}

// serverAtRedis is the server the plan's TCP --redis address reaches (nil
// for a unix socket, no address, or no listener known), and that address.
func (pc *planContext) serverAtRedis() (*host.Process, string, error) {
	r := pc.in.Redis
	if r == nil || r.Addr == "" || r.Network == "unix" || strings.HasPrefix(r.Addr, "/") {
		return nil, "", nil
	}
	if !slices.ContainsFunc(pc.in.Host.Processes, func(p host.Process) bool { return len(p.Listen) > 0 }) {
		return nil, "", nil // no listener read (a tree without them): the address cannot be matched
	}
	p, err := pc.in.Host.ServerAt(r.Addr)
	if err != nil {
		return nil, "", fmt.Errorf("--redis %s: %w (want HOST:PORT or a unix socket path)", r.Addr, err)
	}
	return p, r.Addr, nil
}

// serversList names the snapshot's servers for a choice: "pid 12 at
// 0.0.0.0:7601; pid 14 at 0.0.0.0:6379 in netns blue".
func serversList(snap *host.Snapshot) string {
	parts := make([]string, len(snap.Processes))
	for i := range snap.Processes {
		p := &snap.Processes[i]
		parts[i] = fmt.Sprintf("pid %d", p.PID)
		if a := p.ListenAddrs(); len(a) > 0 {
			parts[i] += " at " + strings.Join(a, " ")
		}
		if p.OtherNetNS() {
			parts[i] += " in netns " + p.NetNSFlag()
		}
	}
	return "redis-servers: " + strings.Join(parts, "; ")
}

// redisServers returns the servers IRQs and RPS keep off: the pid given,
// else every redis-server in the snapshot (a queue IRQ on any server's
// CPU steals that server's cycles; numa-bind still needs one chosen).
func (pc *planContext) redisServers() ([]*host.Process, error) {
	if pc.in.PID != 0 {
		p, err := pc.pickRedis()
		if err != nil {
			return nil, err
		}
		return []*host.Process{p}, nil
	}
	snap := pc.in.Host
	out := make([]*host.Process, len(snap.Processes))
	for i := range snap.Processes {
		out[i] = &snap.Processes[i]
	}
	return out, nil
}

// nicCPUs returns the CPUs local to the NIC that may take its work and
// the node they are on, as placement decides them for IRQs.
func (pc *planContext) nicCPUs(nic *host.NIC) (host.CPUSet, int, error) {
	cpus, node, notes, err := placement.LocalCPUs(pc.in.Host, nic, pc.in.NICNode)
	for _, n := range notes {
		pc.note("%s", n)
	}
	return cpus, node, err
}
