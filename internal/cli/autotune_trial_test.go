package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/autotune"
	"redline/internal/bench/cmdline"
	"redline/internal/redisserver"
	"redline/internal/testutil"
	"redline/internal/tune"
)

// trialWorkload is a short one: these tests check that a trial applies,
// measures and restores, not what it measures.
const trialWorkload = "-t set -c 4 -P 4 --duration 200ms --warmup 20ms"

func startTrialTarget(t *testing.T, config []string, allowHostWide bool) (*localTarget, string) {
	t.Helper()
	wl, err := cmdline.ParseWorkload(trialWorkload)
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "tune")
	tg, err := startLocalTarget(context.Background(), config, wl, false, state, allowHostWide)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tg.close)
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
		if v, err := tg.Trial(ctx, c); err != nil || v <= 0 {
			t.Fatalf("trial %s: %v, %v", c, v, err)
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
	if _, err := tg.Trial(ctx, autotune.Config{{Knob: "profile.redis-config", Value: "on"}}); err != nil {
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
