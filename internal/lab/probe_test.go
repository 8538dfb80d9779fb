package lab

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/labdata"
	"redline/internal/profile"
	"redline/internal/testutil"
)

// TestLabProfileEndToEnd runs a lab with profile: true against a real
// redis-server: every run has a breakdown of the server's threads, the
// middle repetition of each variant has a profile with its files, and the
// tuned variant's profile is compared with the baseline's.
func TestLabProfileEndToEnd(t *testing.T) {
	t.Parallel() // waits on its own servers
	testutil.Heavy(t)
	s := tiny(t, "managed")
	s.Workloads[0].Bench = "-t set -c 8 -n 20000 -r 1000"
	s.Variants = s.Variants[:2]
	s.Profile = true
	dir := t.TempDir()
	res, err := Execute(context.Background(), Options{Scenario: s, ResultPath: filepath.Join(dir, "result.json")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 2*3 || res.Sampling == nil || res.Sampling.ProfileRep != 2 || res.Sampling.Breakdown != "" {
		t.Fatalf("%d runs, sampling %+v", len(res.Runs), res.Sampling)
	}
	if !strings.Contains(res.Sampling.QueueIRQNote, "loopback") {
		t.Errorf("queue IRQ note on loopback: %q", res.Sampling.QueueIRQNote)
	}
	for _, r := range res.Runs {
		b := r.Breakdown
		if b == nil || len(b.CPUs) == 0 || b.Server == nil || b.Server.PID == 0 || len(b.Server.Threads) == 0 {
			t.Fatalf("run %d: breakdown %+v", r.Seq, b)
		}
		if b.Server.Total.UserPct+b.Server.Total.SysPct <= 0 {
			t.Errorf("run %d: the server used no CPU under load: %+v", r.Seq, b.Server.Total)
		}
		if (r.Rep == 2) != (r.Profile != nil) {
			t.Errorf("run %d (rep %d): profile %+v", r.Seq, r.Rep, r.Profile)
		}
	}
	var tuned *labdata.RunProfile
	for _, r := range res.Runs {
		p := r.Profile
		if p == nil {
			continue
		}
		if p.Error != "" {
			if strings.Contains(p.Error, profile.ErrPerfMissing.Error()) || strings.Contains(p.Error, "may not sample") {
				testutil.Need(t, "perf")
				t.Skipf("perf cannot sample here: %s", p.Error)
			}
			t.Fatalf("run %d: %s", r.Seq, p.Error)
		}
		if p.Samples == 0 || len(p.Top.User)+len(p.Top.Kernel) == 0 {
			t.Errorf("run %d: %d samples, top %+v", r.Seq, p.Samples, p.Top)
		}
		for _, f := range []string{p.Folded, p.Flame} {
			b, err := os.ReadFile(filepath.Join(dir, p.Dir, f))
			if err != nil || len(b) == 0 {
				t.Errorf("run %d: %s: %v", r.Seq, f, err)
			}
		}
		if p.Preempted == nil || p.Preempted.TID == 0 || p.Preempted.Count+p.Preempted.Asleep == 0 {
			t.Errorf("run %d: main thread's switches %+v (%s)", r.Seq, p.Preempted, p.SwitchError)
		}
		if r.Variant == "hz50" {
			tuned = p
		}
	}
	if tuned == nil || tuned.BaseSeq == 0 || len(tuned.Moves) == 0 || tuned.DiffFlame != "diff.svg" {
		t.Fatalf("tuned profile against the baseline: %+v", tuned)
	}
	if b, err := os.ReadFile(filepath.Join(dir, tuned.Dir, "diff.svg")); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("diff.svg: %v", err)
	}
	back, err := labdata.ReadResult(filepath.Join(dir, "result.json"))
	if err != nil || back.Runs[0].Breakdown == nil || back.Sampling == nil {
		t.Fatalf("saved: %v", err)
	}
}

func TestQueueIRQNote(t *testing.T) {
	for _, c := range []struct {
		n        int
		topology string
		want     string
	}{
		{0, "loopback", "over loopback, which raises no NIC interrupt (and the server host has no NIC queue IRQs)"},
		{4, "veth rl-c (10.77.0.2, netns a) <-> rl-s", "veth pair, which raises no NIC interrupt: the NIC queue interrupts counted are the host's other traffic"},
		{0, "network", "the server host has no NIC queue IRQs"},
		{8, "network", ""},
	} {
		got := queueIRQNote(c.n, c.topology)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%d IRQs, %s: %q", c.n, c.topology, got)
		}
	}
}

func TestAddressTargetNotSampled(t *testing.T) {
	tg := &target{kind: "address"}
	if fsys, err := tg.proc(context.Background()); fsys != nil || err != nil {
		t.Errorf("address target's /proc: %v %v", fsys, err)
	}
	l := &labRun{tg: tg, res: &labdata.Result{}, s: labdata.Scenario{Profile: true}}
	l.setupSampling(context.Background(), &labdata.Sequential{MinRuns: 5})
	if l.res.Sampling.Breakdown != "not sampled: the server runs elsewhere" || l.res.Sampling.ProfileRep != 3 {
		t.Errorf("sampling %+v", l.res.Sampling)
	}
	r := l.startSampling(context.Background(), "b", "w", 3)
	bd, p := r.stop(context.Background(), 1)
	if bd != nil || p == nil || p.Error != "not profiled: the server runs elsewhere" {
		t.Errorf("breakdown %+v, profile %+v", bd, p)
	}
}
