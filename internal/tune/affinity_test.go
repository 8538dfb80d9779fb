package tune

import (
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"redline/internal/change"
	"redline/internal/host"
	"redline/internal/redisserver"
	"redline/internal/redistest"
)

// affinitySystem reaches real processes: affinity of a redis-server this
// test started (no host state is touched).
func affinitySystem() *System {
	s := RehearsalSystem("/")
	s.FS, s.Affinity = OSFS{Root: "/"}, SchedAffinity{}
	return s
}

func threadAffinities(t *testing.T, pid int) map[int]string {
	t.Helper()
	s := affinitySystem()
	tids, err := threads(s, strconv.Itoa(pid))
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, tid := range tids {
		cpus, err := SchedAffinity{}.Get(tid)
		if err != nil {
			t.Fatal(err)
		}
		out[tid] = cpus.List()
	}
	return out
}

func needCPUs(t *testing.T, n int) {
	if runtime.NumCPU() < n {
		t.Skipf("needs %d CPUs, this machine has %d", n, runtime.NumCPU())
	}
}

func TestAffinityEveryThread(t *testing.T) {
	needCPUs(t, 2)
	srv := redistest.Start(t)
	before := threadAffinities(t, srv.Pid())
	if len(before) < 2 {
		t.Fatalf("redis-server has %d threads; the test needs its background threads", len(before))
	}
	s := affinitySystem()
	state := t.TempDir()
	p := &Plan{Version: 1, Changes: []change.Change{{Kind: change.KindAffinity, Target: strconv.Itoa(srv.Pid()), Value: "1", Guard: "comm=redis-server"}}}
	if _, err := Apply(bg, s, p, ApplyOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	for tid, cpus := range threadAffinities(t, srv.Pid()) {
		if cpus != "1" {
			t.Errorf("thread %d on %s after apply, want 1", tid, cpus)
		}
	}
	if _, err := Rollback(bg, RollbackOptions{StateDir: state, System: s}); err != nil {
		t.Fatal(err)
	}
	after := threadAffinities(t, srv.Pid())
	for tid, cpus := range before {
		if after[tid] != cpus {
			t.Errorf("thread %d on %s after rollback, want %s", tid, after[tid], cpus)
		}
	}
}

// A process whose threads had different affinities gets each one back.
func TestAffinityPerThreadRestore(t *testing.T) {
	needCPUs(t, 2)
	srv := redistest.Start(t)
	tids := sortedTids(threadAffinities(t, srv.Pid()))
	last := tids[len(tids)-1]
	if err := (SchedAffinity{}).Set(last, host.NewCPUSet(0)); err != nil {
		t.Fatal(err)
	}
	before := threadAffinities(t, srv.Pid())
	s := affinitySystem()
	state := t.TempDir()
	p := &Plan{Version: 1, Changes: []change.Change{{Kind: change.KindAffinity, Target: strconv.Itoa(srv.Pid()), Value: "1", Guard: "comm=redis-server"}}}
	res, err := Apply(bg, s, p, ApplyOptions{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Outcomes[0].Old, strconv.Itoa(last)+"=0") {
		t.Fatalf("old value %q does not record the odd thread", res.Outcomes[0].Old)
	}
	if _, err := Rollback(bg, RollbackOptions{StateDir: state, System: s}); err != nil {
		t.Fatal(err)
	}
	after := threadAffinities(t, srv.Pid())
	for tid, cpus := range before {
		if after[tid] != cpus {
			t.Errorf("thread %d on %s after rollback, want %s", tid, after[tid], cpus)
		}
	}
}

func TestAffinityProcessExitedIsGone(t *testing.T) {
	needCPUs(t, 2)
	srv := redistest.StartWith(t, redisserver.Options{})
	s := affinitySystem()
	state := t.TempDir()
	p := &Plan{Version: 1, Changes: []change.Change{{Kind: change.KindAffinity, Target: strconv.Itoa(srv.Pid()), Value: "0", Guard: "comm=redis-server"}}}
	if _, err := Apply(bg, s, p, ApplyOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	rb, err := Rollback(bg, RollbackOptions{StateDir: state, System: s})
	if err != nil || rb.Count(StatusGone) != 1 || !rb.Archived {
		t.Fatalf("rollback after the process exited: %+v %v", rb, err)
	}
}

func TestAffinityNeedsLiveHost(t *testing.T) {
	s, _, _ := rehearsal(t)
	outs, err := Preview(bg, s, &Plan{Version: 1, Changes: []change.Change{{Kind: change.KindAffinity, Target: "1", Value: "0", Guard: "comm=redis-server"}}})
	if err != nil || outs[0].Status != StatusRefused || !strings.Contains(outs[0].Reason, "live host") {
		t.Fatalf("affinity on a rehearsal tree: %+v %v", outs, err)
	}
}

func TestParseStartTime(t *testing.T) {
	line := "1234 (redis server) (x) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 4 0 987654 1000 10 18446744073709551615"
	got, err := parseStartTime(line)
	if err != nil || got != "987654" {
		t.Fatalf("parseStartTime = %q, %v", got, err)
	}
	if _, err := parseStartTime("garbage"); err == nil {
		t.Error("garbage accepted")
	}
}

func sortedTids(m map[int]string) []int { return slices.Sorted(maps.Keys(m)) }

// A plan made for one program never pins another that took its pid.
func TestAffinityGuard(t *testing.T) {
	srv := redistest.Start(t)
	s := affinitySystem()
	pid := strconv.Itoa(srv.Pid())
	p := &Plan{Version: 1, Changes: []change.Change{{Kind: change.KindAffinity, Target: pid, Value: "0", Guard: "comm=redis-server-6"}}}
	outs, err := Preview(bg, s, p)
	if err != nil || outs[0].Status != StatusRefused || !strings.Contains(outs[0].Reason, "stale") {
		t.Fatalf("guard mismatch: %+v %v", outs, err)
	}
	p.Changes[0].Guard = "comm=redis-server"
	if outs, err = Preview(bg, s, p); err != nil || outs[0].Status == StatusRefused {
		t.Fatalf("guard match: %+v %v", outs, err)
	}
}
