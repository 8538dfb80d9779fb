package target

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/autotune"
	"redline/internal/bench/cmdline"
	"redline/internal/change"
	"redline/internal/knobs"
	"redline/internal/redisserver"
	"redline/internal/redistest"
	"redline/internal/steer"
	"redline/internal/testutil"
	"redline/internal/tune"
)

// trialWorkload is a short one: these tests check that a trial applies,
// measures and restores, not what it measures.
const trialWorkload = "-t set -c 4 -P 4 --duration 200ms --warmup 20ms"

func startTrialTarget(t *testing.T, config []string, allowHostWide bool) (*Target, string) {
	t.Helper()
	wl, err := cmdline.ParseWorkload(trialWorkload)
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "tune")
	o := Options{Spec: Spec{ServerConfig: config, AllowHostWide: allowHostWide}, StateDir: state}
	tg, err := Open(context.Background(), o, wl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tg.Close)
	return tg, state
}

// configOf reads one setting of a trial server.
func configOf(t *testing.T, s *trialServer, name string) string {
	t.Helper()
	cfg, err := s.admin.ConfigGet(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return cfg[name]
}

// noPending fails t when the tune journal holds an unrestored change.
func noPending(t *testing.T, state string) {
	t.Helper()
	st, err := tune.Journaled(context.Background(), tune.StatusOptions{StateDir: state})
	if err != nil || st.Pending() > 0 {
		t.Errorf("the tune journal after the trial: %d pending, %v", st.Pending(), err)
	}
}

// TestAutotuneTrialStartupKnobs: a start-up knob's trial runs on a server
// started beside the baseline's with the changed spec (a redis.conf line,
// a preloaded allocator), the baseline's server keeps its settings and
// pid, and the pool never holds more than maxTrialServers.
func TestAutotuneTrialStartupKnobs(t *testing.T) {
	testutil.Heavy(t)
	tg, state := startTrialTarget(t, []string{"hz 20"}, false)
	base := tg.base()
	basePid := base.pid
	ctx := context.Background()
	var seen *trialServer
	tg.beforeMeasure = func(s *trialServer) { seen = s }

	trial := func(c autotune.Config) {
		t.Helper()
		if m, err := tg.Trial(ctx, c, autotune.TrialOptions{}); err != nil || m.Value <= 0 {
			t.Fatalf("trial %s: %v, %v", c, m.Value, err)
		}
	}
	trial(autotune.Config{{Knob: "redis.io-threads", Value: "2"}})
	if seen == base || configOf(t, seen, "io-threads") != "2" || configOf(t, seen, "hz") != "20" {
		t.Errorf("io-threads trial ran on %s: io-threads %s, hz %s", seen.addr, configOf(t, seen, "io-threads"), configOf(t, seen, "hz"))
	}
	trial(autotune.Config{{Knob: "redis.io-threads", Value: "2"}, {Knob: "redis.tcp-backlog", Value: "4096"}})
	if configOf(t, seen, "tcp-backlog") != "4096" || configOf(t, seen, "io-threads") != "2" {
		t.Errorf("two start-up settings: tcp-backlog %s io-threads %s", configOf(t, seen, "tcp-backlog"), configOf(t, seen, "io-threads"))
	}
	if lib, err := redisserver.AllocatorLib("mimalloc"); err == nil {
		trial(autotune.Config{{Knob: "server.allocator", Value: "mimalloc"}})
		if err := redisserver.CheckMapped(seen.pid, lib); err != nil {
			t.Error(err)
		}
	}
	trial(autotune.Config{})
	if seen.pid != basePid || configOf(t, seen, "io-threads") != "1" || configOf(t, seen, "tcp-backlog") != "511" {
		t.Errorf("the baseline's trial ran on pid %d (want %d), io-threads %s", seen.pid, basePid, configOf(t, seen, "io-threads"))
	}
	if len(tg.servers) > maxTrialServers {
		t.Errorf("%d servers running side by side", len(tg.servers))
	}
	noPending(t, state)
}

// TestAutotuneTrialProfile: a profile knob (redis-config: the server's
// own settings, no host write) is applied through tune's plan composer
// for the trial's server and rolled back after it.
func TestAutotuneTrialProfile(t *testing.T) {
	testutil.Heavy(t)
	tg, state := startTrialTarget(t, []string{"lazyfree-lazy-user-del no"}, false)
	ctx := context.Background()
	var during string
	tg.beforeMeasure = func(s *trialServer) { during = configOf(t, s, "lazyfree-lazy-user-del") }
	if _, err := tg.Trial(ctx, autotune.Config{{Knob: "profile.redis-config", Value: "on"}}, autotune.TrialOptions{}); err != nil {
		t.Fatal(err)
	}
	if after := configOf(t, tg.base(), "lazyfree-lazy-user-del"); during != "yes" || after != "no" {
		t.Errorf("lazyfree-lazy-user-del: %q during the trial, %q after; want yes, then no", during, after)
	}
	noPending(t, state)
}

// TestAutotuneUntriedOnThisHost: values the baseline already has are not
// compared (a start-up setting's value, the allocator the server already
// maps), and a CPU set that reduces to the baseline's says so.
func TestAutotuneUntriedOnThisHost(t *testing.T) {
	testutil.Heavy(t)
	tg, _ := startTrialTarget(t, nil, false)
	ctx := context.Background()
	c, why, ok := tg.untried(ctx, autotune.Candidate{Knob: "redis.io-threads", Values: []string{"1", "2"}})
	if !ok || len(c.Values) != 1 || c.Values[0] != "2" || !strings.Contains(why, `already "1"`) {
		t.Errorf("io-threads: %v, %q, %v", c.Values, why, ok)
	}
	if r := tg.cpus["numa-nic"]; r.list == "" {
		_, why, ok := tg.untried(ctx, autotune.Candidate{Knob: "server.cpus", Values: []string{"numa-nic", "unpinned"}})
		if ok || !strings.Contains(why, "reduces to the baseline's CPUs") {
			t.Errorf("server.cpus on a host where numa-nic is every CPU: %q, %v", why, ok)
		}
	}
	tg.managed = false
	if _, why, ok := tg.untried(ctx, autotune.Candidate{Knob: "redis.io-threads", Values: []string{"2"}}); ok || !strings.Contains(why, "restarts only a server it started") {
		t.Errorf("an attached server's start-up knob: %q, %v", why, ok)
	}
}

// TestAutotuneGuardBesideAnotherServer: with another redis-server on this
// host, the production-host guard (lab.GuardHostWide) leaves host-wide
// knobs (a sysctl, a host profile, steer) untested, with its line, and
// keeps the server's own knobs.
func TestAutotuneGuardBesideAnotherServer(t *testing.T) {
	testutil.Heavy(t)
	redistest.Start(t)
	tg, _ := startTrialTarget(t, nil, false)
	ctx := context.Background()
	if !tg.hostWideOff || !strings.Contains(tg.guardLine, "--allow-host-wide") {
		t.Fatalf("guard: off %v, %q", tg.hostWideOff, tg.guardLine)
	}
	for _, knob := range []string{"sysctl.net.core.somaxconn", "profile.net-sysctl", "steer"} {
		k, _ := knobs.Lookup(knob)
		if _, why, ok := tg.untried(ctx, autotune.Candidate{Knob: knob, Values: k.Values}); ok || !strings.Contains(why, "host-wide") {
			t.Errorf("%s beside another server: %q, %v", knob, why, ok)
		}
	}
	if _, why, ok := tg.untried(ctx, autotune.Candidate{Knob: "profile.redis-config", Values: []string{"on"}}); !ok {
		t.Errorf("the server's own profile was refused: %q", why)
	}
}

// TestAutotuneDoctorFirst: a managed server started with its slow log
// off (doctor rule slowlog-off fires): the doctor's fix puts its knob
// first in the screening order, the fix's value first, and says so.
func TestAutotuneDoctorFirst(t *testing.T) {
	testutil.Heavy(t)
	tg, _ := startTrialTarget(t, []string{"slowlog-log-slower-than -1"}, false)
	cands, untested := Candidates(Spec{Knobs: []string{"redis.hz", "redis.slowlog-log-slower-than"}})
	cands, _, lines := tg.doctorFirst(context.Background(), cands, untested)
	if len(cands) != 2 || cands[0].Knob != "redis.slowlog-log-slower-than" || cands[0].Values[0] != "10000" {
		t.Fatalf("candidates %+v", cands)
	}
	if !strings.Contains(strings.Join(lines, "\n"), "redis.slowlog-log-slower-than = 10000 screened first (from doctor rule slowlog-off") {
		t.Errorf("lines %q", lines)
	}
}

// irqAffinities reads every IRQ's affinity list.
func irqAffinities(t *testing.T) map[string]string {
	t.Helper()
	paths, _ := filepath.Glob("/proc/irq/*/smp_affinity_list")
	out := map[string]string{}
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			out[p] = strings.TrimSpace(string(b))
		}
	}
	return out
}

// TestAutotuneTrialSteer: steer runs during the trial's measurement (a
// second start is refused while it runs) and is stopped after it, every
// IRQ affinity as before. Writes the host: REDLINE_TEST_HOST_WRITES=1.
func TestAutotuneTrialSteer(t *testing.T) {
	testutil.HostWrites(t)
	tfs, err := steer.OpenTracefs()
	if err != nil {
		t.Skipf("tracefs: %v", err)
	}
	tfs.Close()
	tg, state := startTrialTarget(t, nil, true)
	before := irqAffinities(t)
	ctx := context.Background()
	var running error
	tg.beforeMeasure = func(s *trialServer) {
		_, running = tg.host.SteerStart(ctx, trialSteer, s.pid)
	}
	if _, err := tg.Trial(ctx, autotune.Config{{Knob: "steer", Value: "on"}}, autotune.TrialOptions{}); err != nil {
		t.Fatal(err)
	}
	if running == nil || !strings.Contains(running.Error(), "already runs") {
		t.Errorf("a second steer during the trial: %v; want it refused (one runs)", running)
	}
	if after := irqAffinities(t); !maps.Equal(before, after) {
		t.Errorf("IRQ affinities differ after the trial")
	}
	noPending(t, state)
}

// TestAutotuneTrialHostProfile: host-wide profiles (net-sysctl, the
// queue IRQs' placement, RPS/XPS) are applied for their trial and every
// value they change is as found after it. Writes the host:
// REDLINE_TEST_HOST_WRITES=1.
func TestAutotuneTrialHostProfile(t *testing.T) {
	testutil.HostWrites(t)
	tg, state := startTrialTarget(t, nil, true)
	ctx := context.Background()
	for _, knob := range []string{"profile.net-sysctl", "irq.irq-local", "net.rps-xps"} {
		k, _ := knobs.Lookup(knob)
		if _, why, ok := tg.untried(ctx, autotune.Candidate{Knob: knob, Values: k.Values}); !ok {
			t.Logf("%s on this host: %s", knob, why)
			continue
		}
		plan := tg.profilePlans[tg.base().key+"|"+k.Target]
		before := liveValues(plan.Changes)
		var during map[string]string
		tg.beforeMeasure = func(*trialServer) { during = liveValues(plan.Changes) }
		if _, err := tg.Trial(ctx, autotune.Config{{Knob: knob, Value: "on"}}, autotune.TrialOptions{}); err != nil {
			t.Fatalf("%s: %v", knob, err)
		}
		for _, c := range plan.Changes {
			if _, ok := during[c.Target]; ok && !c.Same(c.Value, during[c.Target]) {
				t.Errorf("%s: %s = %q during the trial, want %q", knob, c.Target, during[c.Target], c.Value)
			}
		}
		if after := liveValues(plan.Changes); !maps.Equal(before, after) {
			t.Errorf("%s: after the trial %v, before %v", knob, after, before)
		}
	}
	noPending(t, state)
}

// liveValues reads the sysctls and files cs change, as this host has
// them now.
func liveValues(cs []change.Change) map[string]string {
	out := map[string]string{}
	for _, c := range cs {
		path := c.Target
		switch c.Kind {
		case change.KindSysctl:
			path = "/proc/sys/" + strings.ReplaceAll(c.Target, ".", "/")
		case change.KindFile:
		default:
			continue
		}
		b, _ := os.ReadFile(path)
		out[c.Target] = strings.Join(strings.Fields(string(b)), " ")
	}
	return out
}

// TestSplitPlan: a confirmed config's changes go into the plan; what tune
// cannot apply (a start-up setting, a profile, steer) into its notes.
func TestSplitPlan(t *testing.T) {
	changes, notes, err := splitPlan(autotune.Config{
		{Knob: "redis.hz", Value: "50"}, {Knob: "redis.io-threads", Value: "2"}, {Knob: "server.allocator", Value: "mimalloc"},
		{Knob: "irq.numa-bind", Value: "on"}, {Knob: "steer", Value: "on"},
	})
	if err != nil || len(changes) != 1 || changes[0].Target != "hz" || len(notes) != 4 {
		t.Fatalf("changes %v, notes %q, %v", changes, notes, err)
	}
	for i, want := range []string{`"io-threads 2" in redis.conf`, "LD_PRELOAD the mimalloc library", "--profile numa-bind", "redline steer"} {
		if !strings.Contains(notes[i], want) {
			t.Errorf("note %q lacks %q", notes[i], want)
		}
	}
}
