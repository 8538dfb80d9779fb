package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"redline/internal/guard"
	"redline/internal/redisserver"
	"redline/internal/redistest"
)

// guardFast are guard flags for tests: short ticks, and a latency floor
// out of reach (the machine's load moves the probe's p99; the latency
// rule's error rate is internal/guard's TestFalseTripRate).
var guardFast = []string{"--guard-baseline", "2s", "--guard-interval", "200ms", "--guard-probe-rate", "200", "--guard-latency-floor", "1m"}

func guardPlan(t *testing.T, s *redisserver.Server, name, value string) string {
	t.Helper()
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	body := fmt.Sprintf("version: 1\nredis: {addr: %q}\nchanges:\n  - {kind: redis-config, target: %s, value: %q}\n", s.Addr(), name, value)
	if err := os.WriteFile(plan, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return plan
}

// writeLoad writes keys until the test ends: under a maxmemory too small
// they fail with OOM error replies.
func writeLoad(t *testing.T, s *redisserver.Server) {
	c := redistest.Client(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	var done atomic.Bool
	t.Cleanup(func() {
		cancel()
		for !done.Load() {
			time.Sleep(time.Millisecond)
		}
	})
	go func() {
		defer done.Store(true)
		for i := 0; ctx.Err() == nil; i++ {
			c.Do(ctx, "SET", fmt.Sprintf("k%d", i%1000), "v")
			time.Sleep(time.Millisecond)
		}
	}()
}

// TestTuneApplyGuardTrips: tune apply --guard of a plan that hurts (a
// maxmemory of one byte under noeviction: every write fails) trips the
// errors rule, rolls the change back through the journal (maxmemory is
// back, nothing pending), exits 1 and exports the trip as a metric.
func TestTuneApplyGuardTrips(t *testing.T) {
	s := redistest.Start(t, "maxmemory-policy noeviction")
	writeLoad(t, s)
	ctx := context.Background()
	root, _ := makeTuneTree(t)
	state := filepath.Join(t.TempDir(), "state")
	prom := filepath.Join(t.TempDir(), "guard.prom")
	args := append([]string{"tune", "apply", guardPlan(t, s, "maxmemory", "1"), "--yes", "--guard", "--guard-window", "1m",
		"--root", root, "--state-dir", state, "--guard-metrics-file", prom}, guardFast...)
	out, errs, code := runCLI(t, ctx, nil, args...)
	t.Logf("apply --guard:\n%s%s", out, errs)
	if code != 1 || !strings.Contains(out, "tripped errors") || !strings.Contains(errs, "guard tripped (errors)") {
		t.Fatalf("apply --guard: code %d, want 1 and the errors rule\n%s%s", code, out, errs)
	}
	if v := redistest.ConfigValue(t, s.Addr(), "maxmemory"); v != "0" {
		t.Errorf("maxmemory after the guard tripped: %s, want 0 (rolled back)", v)
	}
	st, _, code := runCLI(t, ctx, nil, "tune", "status", "--state-dir", state)
	if code != 0 || strings.Contains(st, "maxmemory") || strings.Contains(st, "guard ") {
		t.Errorf("status after the rollback still holds the change or an open guard:\n%s", st)
	}
	b, err := os.ReadFile(prom)
	if err != nil || !strings.Contains(string(b), `redline_guard_tripped{rule="errors"} 1`) || !strings.Contains(string(b), `redline_guard_phase{phase="rolled-back"} 1`) {
		t.Errorf("metrics file (%v):\n%s", err, b)
	}
}

// TestTuneApplyGuardKeeps: a neutral plan (hz 10 -> 11) is kept when the
// window ends, exit 0.
func TestTuneApplyGuardKeeps(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	root, _ := makeTuneTree(t)
	state := filepath.Join(t.TempDir(), "state")
	args := append([]string{"tune", "apply", guardPlan(t, s, "hz", "11"), "--yes", "--guard", "--guard-window", "3s",
		"--root", root, "--state-dir", state}, guardFast...)
	out, errs, code := runCLI(t, ctx, nil, args...)
	if code != 0 || !strings.Contains(out, ": kept") {
		t.Fatalf("apply --guard: code %d, want 0, kept\n%s%s", code, out, errs)
	}
	if v := redistest.ConfigValue(t, s.Addr(), "hz"); v != "11" {
		t.Errorf("hz after a kept guard: %s, want 11", v)
	}
	runCLI(t, ctx, nil, "tune", "rollback", "--state-dir", state)
}

// TestGuardKilledResumes: a guard killed with -9 mid-window leaves its
// change applied and its state open; tune status says the change is not
// watched; guard --resume watch takes it over and watches on to the
// window's end against the journaled baseline, and says for how long it
// was unwatched.
func TestGuardKilledResumes(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	root, _ := makeTuneTree(t)
	state := filepath.Join(t.TempDir(), "state")
	args := append([]string{"tune", "apply", guardPlan(t, s, "hz", "12"), "--yes", "--guard", "--guard-window", "6s",
		"--root", root, "--state-dir", state}, guardFast...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "REDLINE_TEST_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	defer cmd.Process.Kill()
	waitPhase(t, ended, state, guard.PhaseWatching)
	cmd.Process.Signal(syscall.SIGKILL)
	<-ended
	if v := redistest.ConfigValue(t, s.Addr(), "hz"); v != "12" {
		t.Fatalf("hz after the kill: %s, want 12 (applied, watched by the killed guard)", v)
	}
	st, _, _ := runCLI(t, ctx, nil, "tune", "status", "--state-dir", state)
	if !strings.Contains(st, "its change is NOT watched") {
		t.Errorf("status does not say the change is unwatched:\n%s", st)
	}
	out, errs, code := runCLI(t, ctx, nil, "guard", "--resume", "watch", "--state-dir", state)
	if code != 0 || !strings.Contains(out, ": kept") || !strings.Contains(out, "unwatched (policy watch)") {
		t.Fatalf("guard --resume watch: code %d\n%s%s", code, out, errs)
	}
	if out, _, _ := runCLI(t, ctx, nil, "guard", "--resume", "watch", "--state-dir", state); !strings.Contains(out, "no guard to resume") {
		t.Errorf("a second resume found work:\n%s", out)
	}
	runCLI(t, ctx, nil, "tune", "rollback", "--state-dir", state)
}

// waitPhase waits until a guard in state reaches phase (or the command ends).
func waitPhase(t *testing.T, ended <-chan error, state, phase string) {
	t.Helper()
	for {
		states, _, _ := guard.ReadStates(state)
		if len(states) == 1 && states[0].Phase == phase {
			return
		}
		select {
		case err := <-ended:
			t.Fatalf("the guard ended (%v) before %s", err, phase)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
