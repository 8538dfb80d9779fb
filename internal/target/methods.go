package target

// How each knob of a config reaches the target: one entry per
// knobs.Method (and, for the start-up settings, one per knob kind). An
// entry says how a value is applied (add puts it into the trial's parts:
// a change or a profile into the trial's scoped plan, which its session
// rolls back; steer started and stopped around the measurement; a
// start-up setting into the spec of the pool server the trial runs on),
// why a value is not compared on this target (cannot: the baseline has it
// already, or this target cannot apply it), what plan.yaml says of a kept
// value no tune plan holds (note), and whether trying it writes the host
// outside the server (writesHost). Adding a start-up knob kind touches
// the catalog (internal/knobs) and one entry of startups.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"redline/internal/autotune"
	"redline/internal/change"
	"redline/internal/knobs"
	"redline/internal/redisserver"
	"redline/internal/serverhost"
)

// trialParts is a config split by how its settings are applied.
type trialParts struct {
	start    serverhost.RedisStartArgs
	changes  []change.Change
	profiles []string
	steer    bool
}

// method is how the knobs of one knobs.Method reach the target.
type method struct {
	add        func(t *Target, p *trialParts, k knobs.Knob, v string) error
	cannot     func(ctx context.Context, t *Target, k knobs.Knob, v string) string
	note       func(k knobs.Knob, v string) string // "" for a change: the plan holds it
	writesHost func(k knobs.Knob) bool
}

var methods = map[knobs.Method]method{
	knobs.ByChange: {
		add: func(_ *Target, p *trialParts, k knobs.Knob, v string) error {
			ch, _ := k.Change(v)
			p.changes = append(p.changes, ch)
			return nil
		},
		cannot:     func(ctx context.Context, t *Target, k knobs.Knob, v string) string { return t.cannotChange(ctx, k, v) },
		note:       func(knobs.Knob, string) string { return "" },
		writesHost: func(k knobs.Knob) bool { return k.Kind != knobs.KindRedisConfig },
	},
	knobs.ByProfile: {
		add: func(_ *Target, p *trialParts, k knobs.Knob, _ string) error {
			name, _ := k.Profile()
			p.profiles = append(p.profiles, name)
			return nil
		},
		cannot: func(ctx context.Context, t *Target, k knobs.Knob, _ string) string { return t.cannotProfile(ctx, k) },
		note: func(k knobs.Knob, _ string) string {
			return fmt.Sprintf("%s: plan the profile on the server's host: redline tune plan --profile %s", k.Name, k.Target)
		},
		writesHost: func(k knobs.Knob) bool { return k.Target != "redis-config" && k.Target != "numa-bind" },
	},
	knobs.BySteer: {
		add:    func(_ *Target, p *trialParts, _ knobs.Knob, _ string) error { p.steer = true; return nil },
		cannot: func(ctx context.Context, t *Target, _ knobs.Knob, _ string) string { return t.cannotSteer(ctx) },
		note: func(k knobs.Knob, _ string) string {
			return fmt.Sprintf("%s: run redline steer beside the server", k.Name)
		},
		writesHost: func(knobs.Knob) bool { return true },
	},
	knobs.ByServerSpec: {
		add: func(t *Target, p *trialParts, k knobs.Knob, v string) error {
			st, _ := k.Start(v)
			if !t.restarts() {
				return fmt.Errorf("knob %s is applied by %s, which this target cannot do", k.Name, k.Method())
			}
			if err := startups[k.Kind].set(t, &p.start, st); err != nil {
				return fmt.Errorf("%s=%s: %w", k.Name, v, err)
			}
			return nil
		},
		cannot: func(ctx context.Context, t *Target, k knobs.Knob, v string) string {
			if !t.restarts() {
				return "needs a server restart: autotune restarts only a server it started (an attached server keeps its settings)"
			}
			return startups[k.Kind].cannot(ctx, t, k, v)
		},
		note: func(k knobs.Knob, v string) string {
			return k.Name + ": at the server's next start: " + startups[k.Kind].note(k, v)
		},
		writesHost: func(knobs.Knob) bool { return false },
	},
}

// startup is how one start-up knob kind sets the server's start, why a
// value is not compared, and what plan.yaml says of it.
type startup struct {
	set    func(t *Target, a *serverhost.RedisStartArgs, st knobs.Start) error
	cannot func(ctx context.Context, t *Target, k knobs.Knob, v string) string
	note   func(k knobs.Knob, v string) string
}

var startups = map[knobs.Kind]startup{
	knobs.KindRedisRestart: {
		set: func(_ *Target, a *serverhost.RedisStartArgs, st knobs.Start) error {
			a.Config = append(a.Config, st.ConfigLine) // the last line of a directive wins
			return nil
		},
		cannot: func(ctx context.Context, t *Target, k knobs.Knob, v string) string {
			if cur, ok := t.configNow(ctx, k.Target); ok && cur == v {
				return fmt.Sprintf("already %q on the target", cur)
			}
			return ""
		},
		note: func(k knobs.Knob, v string) string {
			st, _ := k.Start(v)
			return fmt.Sprintf("%q in redis.conf (tune does not restart servers)", st.ConfigLine)
		},
	},
	knobs.KindAllocator: {
		set: func(_ *Target, a *serverhost.RedisStartArgs, st knobs.Start) error {
			a.Allocator = st.Allocator
			return nil
		},
		cannot: func(_ context.Context, t *Target, _ knobs.Knob, v string) string {
			lib, err := redisserver.AllocatorLib(v)
			if err != nil {
				return err.Error()
			}
			if redisserver.CheckMapped(t.base().pid, lib) == nil {
				return fmt.Sprintf("the server already runs with %s (%s is mapped)", v, lib)
			}
			return ""
		},
		note: func(_ knobs.Knob, v string) string { return fmt.Sprintf("LD_PRELOAD the %s library", v) },
	},
	knobs.KindServerCPUs: {
		set: func(t *Target, a *serverhost.RedisStartArgs, st knobs.Start) error {
			cpus, ok := t.cpus[st.CPUs]
			if !ok {
				return fmt.Errorf("CPU set %q was not resolved on this host", st.CPUs)
			}
			a.CPUs, a.NUMANode = cpus.list, cpus.node
			return nil
		},
		cannot: func(_ context.Context, t *Target, _ knobs.Knob, v string) string {
			if t.cpusErr != nil && v != "unpinned" {
				return "the NIC's CPUs: " + t.cpusErr.Error()
			}
			switch r := t.cpus[v]; {
			case r.list != "" || t.start.CPUs != "":
			case v == "unpinned":
				return "already unpinned on the target"
			default:
				return "reduces to the baseline's CPUs on this host: " + r.note
			}
			return ""
		},
		note: func(_ knobs.Knob, v string) string { return fmt.Sprintf("CPU set %s (taskset or numactl)", v) },
	},
	knobs.KindServerBuild: {
		set:    func(t *Target, a *serverhost.RedisStartArgs, st knobs.Start) error { return t.startBuild(a, st.Build) },
		cannot: func(_ context.Context, t *Target, _ knobs.Knob, v string) string { return t.cannotBuild(v) },
		note:   func(_ knobs.Knob, v string) string { return fmt.Sprintf("the binary built as %s (below)", v) },
	},
}

// methodOf is k's entry; ok is false for a knob autotune never applies.
func methodOf(k knobs.Knob) (method, bool) {
	m, ok := methods[k.Method()]
	if ok && k.Method() == knobs.ByServerSpec {
		_, ok = startups[k.Kind]
	}
	return m, ok
}

// partsOf splits c; the start-up spec is the baseline's with c's start-up
// settings on top.
func (t *Target) partsOf(c autotune.Config) (trialParts, error) {
	p := trialParts{start: t.start}
	p.start.Config = slices.Clone(t.start.Config)
	for _, s := range c {
		k, ok := knobs.Lookup(s.Knob)
		if !ok {
			return p, fmt.Errorf("no knob %s in the catalog", s.Knob)
		}
		m, ok := methodOf(k)
		if !ok {
			return p, fmt.Errorf("knob %s is applied by %s, which this target cannot do", k.Name, k.Method())
		}
		if err := m.add(t, &p, k, s.Value); err != nil {
			return p, err
		}
	}
	return p, nil
}

// cannot says why k=v is not compared on this target ("" when it is).
func (t *Target) cannot(ctx context.Context, k knobs.Knob, v string) string {
	if why := t.cannotOnCluster(k); why != "" {
		return why
	}
	m, ok := methodOf(k)
	if !ok {
		return "never applied"
	}
	return m.cannot(ctx, t, k, v)
}

// writesHost says whether trying k writes the host outside the server:
// a sysctl, a file under /sys, a profile other than the server's own
// settings and threads, steer.
func writesHost(k knobs.Knob) bool {
	m, ok := methodOf(k)
	return ok && m.writesHost(k)
}

// splitPlan is a config's changes for a tune plan, and notes for what a
// plan cannot hold: start-up settings, profiles, steer.
func splitPlan(c autotune.Config) ([]change.Change, []string, error) {
	var out []change.Change
	var notes []string
	for _, s := range c {
		k, ok := knobs.Lookup(s.Knob)
		if !ok {
			return nil, nil, fmt.Errorf("no knob %s in the catalog", s.Knob)
		}
		if ch, ok := k.Change(s.Value); ok {
			out = append(out, ch)
			continue
		}
		if m, ok := methodOf(k); ok {
			notes = append(notes, m.note(k, s.Value))
		}
	}
	return out, notes, nil
}

// cannotChange: a value the server already has, or a host-wide change the
// guard refused.
func (t *Target) cannotChange(ctx context.Context, k knobs.Knob, v string) string {
	ch, _ := k.Change(v)
	if len(t.guarded([]change.Change{ch})) == 0 {
		return "host-wide: " + t.guardLine
	}
	if k.Kind != knobs.KindRedisConfig {
		if cur, ok := t.hostNow(ctx, ch); ok && ch.Same(v, cur) {
			return fmt.Sprintf("already %q on the server host", cur)
		}
		return ""
	}
	if cur, ok := t.configNow(ctx, k.Target); ok && ch.Same(v, cur) {
		return fmt.Sprintf("already %q on the target", cur)
	}
	return ""
}

// cannotProfile: a profile that plans no change here (or only host-wide
// changes the guard refused) would compare the target with itself.
func (t *Target) cannotProfile(ctx context.Context, k knobs.Knob) string {
	name, _ := k.Profile()
	base := t.base()
	plan, err := t.plan(ctx, base, trialParts{profiles: []string{name}})
	if err != nil {
		return "tune cannot plan it here: " + err.Error()
	}
	if len(plan.Changes) > 0 {
		return ""
	}
	all := t.profilePlans[base.key+"|"+name]
	if all != nil && len(all.Changes) > 0 {
		return "its changes are host-wide: " + t.guardLine
	}
	why := "tune plans no change on this host"
	if all != nil && len(all.Notes) > 0 {
		why += " (" + strings.Join(all.Notes, "; ") + ")"
	}
	return why
}

// cannotSteer: steer moves host IRQs (host-wide), and needs the kernel's
// tracepoints; it is started and stopped once to know.
func (t *Target) cannotSteer(ctx context.Context) string {
	if t.hostWideOff {
		return "moves host IRQs (host-wide): " + t.guardLine
	}
	id, err := t.host.SteerStart(ctx, trialSteer, t.base().pid)
	if err != nil {
		return "steer cannot run here: " + err.Error()
	}
	if err := t.steerStop(id); err != nil {
		return "steer did not stop cleanly: " + err.Error()
	}
	return ""
}
