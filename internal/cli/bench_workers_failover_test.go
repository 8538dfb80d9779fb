package cli

import (
	"context"
	"math"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"redline/internal/benchdata"
	"redline/internal/redisserver"
	"redline/internal/redistest"
)

// TestBenchWorkersReconnectServerRestarted (issue 40): with --workers the
// merged result kept only the first worker's failover figures. Two
// worker processes run through a server killed and restarted on its port:
// the merged result has one outage (each worker's, joined) within 100 ms
// of the true length, its failed requests are every worker's, and its
// successes equal the two servers' calls (DEL of keys that never exist:
// never replicated, refused while paused).
func TestBenchWorkersReconnectServerRestarted(t *testing.T) {
	s := redistest.Start(t)
	t.Setenv("REDLINE_TEST_MAIN", "1")
	out := filepath.Join(t.TempDir(), "w.json")
	type result struct {
		stdout, stderr string
		code           int
	}
	done := make(chan result, 1)
	go func() {
		o, e, c := runCLI(t, context.Background(), nil, "bench", "--workers", "2", "--reconnect", "-p", port(s), "-c", "8",
			"--duration", "4s", "-r", "1000", "--progress", "none", "-o", out, "DEL", "none:__rand_int__")
		done <- result{o, e, c}
	}()
	for commandCalls(t, s)["del"] < 2000 {
		select {
		case r := <-done:
			t.Fatalf("bench ended before the kill: exit %d\n%s", r.code, r.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	c := redistest.Client(t, s)
	redistest.Do(t, c, "CLIENT", "PAUSE", "10000", "WRITE")
	before := commandCalls(t, s)["del"]
	t0 := time.Now()
	syscall.Kill(s.Pid(), syscall.SIGKILL)
	<-s.Exited()
	time.Sleep(400 * time.Millisecond)
	s2, err := redisserver.Start(context.Background(), redisserver.Options{Port: s.Port})
	down := time.Since(t0)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	t.Cleanup(func() { s2.Stop() })
	r := <-done
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	after := commandCalls(t, s2)["del"]
	doc, err := benchdata.ReadDocument(out)
	if err != nil {
		t.Fatal(err)
	}
	sum := doc.Results[0]
	if len(sum.Workers) != 2 || sum.WorkersFailed != 0 {
		t.Fatalf("%d workers, %d failed", len(sum.Workers), sum.WorkersFailed)
	}
	if sum.Requests != int64(before+after) {
		t.Errorf("successes %d, the servers' calls %d + %d = %d", sum.Requests, before, after, before+after)
	}
	f := sum.Failover
	if f == nil || len(f.Outages) != 1 {
		t.Fatalf("failover = %+v, want one outage", f)
	}
	ou := f.Outages[0]
	diff := time.Duration(math.Abs(ou.Seconds-down.Seconds()) * 1e9)
	t.Logf("outage reported %.3f s, true %.3f s (diff %v); %d failed, %d reconnects, successes %d = %d + %d; %+v",
		ou.Seconds, down.Seconds(), diff, f.FailedRequests, f.Reconnects, sum.Requests, before, after, ou)
	if diff > 100*time.Millisecond || !ou.Recovered {
		t.Errorf("outage %+v, the server was down %v", ou, down)
	}
	// Every worker's reconnects: each of the 8 clients was set up again.
	if f.Reconnects < 8 || sum.Errors != f.FailedRequests || ou.FailedRequests != f.FailedRequests || ou.Failures["refused"] == 0 {
		t.Errorf("reconnects %d, errors %d, failed %d, outage's failed %d, failures %+v", f.Reconnects, sum.Errors, f.FailedRequests, ou.FailedRequests, ou.Failures)
	}
	var perSecond int64
	for _, s := range f.Seconds {
		for _, v := range s.Failures {
			perSecond += v
		}
	}
	if perSecond != f.FailedRequests+f.FailedConnects {
		t.Errorf("per second failures sum to %d, want %d requests + %d connects", perSecond, f.FailedRequests, f.FailedConnects)
	}
}
