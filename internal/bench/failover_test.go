package bench

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"redline/internal/benchdata"
	"redline/internal/redisadmin"
	"redline/internal/redisserver"
	"redline/internal/redistest"
)

// delTest deletes keys that never exist: a write (a replica or a paused
// primary refuses it) that is never replicated, so each server's cmdstat
// counts exactly the requests it answered itself.
var delTest = Test{Title: "DEL", Args: []string{"DEL", "none:__rand_int__"}}

// calls is s's cmdstat calls of cmd.
func calls(t *testing.T, s *redisserver.Server, cmd string) int64 {
	t.Helper()
	info := redisadmin.ParseInfo(redistest.Do(t, redistest.Client(t, s), "INFO", "commandstats").Str)
	for _, cs := range info.Commandstats() {
		if cs.Command == cmd {
			return cs.Calls
		}
	}
	return 0
}

// afterRequests returns a Progress hook and a channel closed once n
// requests were measured.
func afterRequests(n int64) (func(Progress), <-chan struct{}) {
	ch := make(chan struct{})
	var once sync.Once
	return func(p Progress) {
		if p.Requests >= n {
			once.Do(func() { close(ch) })
		}
	}, ch
}

// TestReconnectServerRestarted kills the server mid-run and starts another
// on its port: the run goes on, its outage is the time the port had no
// server (within 100 ms), and its successes are the two servers' calls.
// Before the kill the server is paused for writes (CLIENT PAUSE WRITE) so
// its count can be read with no request executed after it.
func TestReconnectServerRestarted(t *testing.T) {
	s := redistest.Start(t)
	o := testOptions(s)
	o.Clients, o.Requests, o.Duration, o.Reconnect = 8, 0, 3*time.Second, true
	o.Keys.Space = 1000
	var started <-chan struct{}
	o.Progress, started = afterRequests(2000)
	o.ProgressInterval = 20 * time.Millisecond

	type outage struct {
		before     int64
		down       time.Duration
		s2         *redisserver.Server
		err        error
		killedWhen time.Time
	}
	res := make(chan outage, 1)
	go func() {
		<-started
		var out outage
		c := redistest.Client(t, s)
		redistest.Do(t, c, "CLIENT", "PAUSE", "10000", "WRITE")
		out.before = calls(t, s, "del")
		t0 := time.Now()
		syscall.Kill(s.Pid(), syscall.SIGKILL)
		<-s.Exited()
		time.Sleep(400 * time.Millisecond)
		out.s2, out.err = redisserver.Start(context.Background(), redisserver.Options{Port: s.Port})
		out.down = time.Since(t0)
		res <- out
	}()
	sum, err := Run(context.Background(), o, delTest, nil)
	out := <-res
	if out.err != nil {
		t.Fatalf("restart: %v", out.err)
	}
	t.Cleanup(func() { out.s2.Stop() })
	if err != nil {
		t.Fatalf("the run ended: %v", err)
	}
	after := calls(t, out.s2, "del")
	if sum.Requests != out.before+after {
		t.Errorf("successes %d, the servers' calls %d + %d = %d", sum.Requests, out.before, after, out.before+after)
	}
	f := sum.Failover
	if f == nil || len(f.Outages) != 1 {
		t.Fatalf("failover = %+v, want one outage", f)
	}
	ou := f.Outages[0]
	diff := time.Duration(math.Abs(ou.Seconds-out.down.Seconds()) * 1e9)
	t.Logf("outage reported %.3f s, true %.3f s (diff %v); %d failed, %d reconnects, successes %d = %d + %d; %+v",
		ou.Seconds, out.down.Seconds(), diff, f.FailedRequests, f.Reconnects, sum.Requests, out.before, after, ou)
	if diff > 100*time.Millisecond || !ou.Recovered {
		t.Errorf("outage %+v, the server was down %v", ou, out.down)
	}
	if ou.Failures["refused"] == 0 || f.Reconnects < int64(o.Clients) || sum.Errors != f.FailedRequests {
		t.Errorf("failures %+v, reconnects %d, errors %d", ou.Failures, f.Reconnects, sum.Errors)
	}
	checkSeconds(t, f)
}

// checkSeconds checks the per-second failures agree with the outages.
func checkSeconds(t *testing.T, f *benchdata.Failover) {
	t.Helper()
	var n int64
	for _, s := range f.Seconds {
		for _, v := range s.Failures {
			n += v
		}
	}
	if n != f.FailedRequests+f.FailedConnects {
		t.Errorf("per second failures sum to %d, want %d requests + %d connects", n, f.FailedRequests, f.FailedConnects)
	}
	if len(f.Outages) > 0 && (len(f.Seconds) == 0 || f.Seconds[0].Second != f.Outages[0].FirstSecond) {
		t.Errorf("seconds %+v do not start at the outage's first second %d", f.Seconds, f.Outages[0].FirstSecond)
	}
}

// TestNoReconnectEndsTheRun: without --reconnect a killed server ends
// the run with the error, as before.
func TestNoReconnectEndsTheRun(t *testing.T) {
	s := redistest.Start(t)
	o := testOptions(s)
	o.Clients, o.Requests, o.Duration = 4, 0, 3*time.Second
	var started <-chan struct{}
	o.Progress, started = afterRequests(500)
	o.ProgressInterval = 20 * time.Millisecond
	go func() {
		<-started
		syscall.Kill(s.Pid(), syscall.SIGKILL)
	}()
	sum, err := Run(context.Background(), o, delTest, nil)
	if err == nil || sum == nil || sum.Failover != nil {
		t.Fatalf("run after a kill: %v, %+v", err, sum)
	}
}

// TestFailRecOutages: failures less than a second apart after a success,
// or with no success between them, are one outage; its end is the first
// success after its last failure; a request in flight across it
// straddled it.
func TestFailRecOutages(t *testing.T) {
	ms := int64(time.Millisecond)
	f := &failRec{from: func() int64 { return 0 }}
	f.ok(0, 100*ms)
	f.fail(200*ms, kindReset, 3, false)
	f.fail(300*ms, kindRefused, 0, true)
	f.ok(150*ms, 700*ms) // sent before the outage, answered after it: straddled
	f.fail(1200*ms, kindLoading, 1, false)
	f.ok(1250*ms, 1300*ms)
	f.fail(2500*ms, kindReadonly, 2, false) // more than a second after the last failure
	r := &runner{}
	got := r.failover([]*failRec{f}, 0)
	if len(got.Outages) != 2 || got.FailedRequests != 6 || got.FailedConnects != 1 {
		t.Fatalf("failover = %+v", got)
	}
	o := got.Outages[0]
	if o.StartSeconds != 0.2 || o.EndSeconds != 1.3 || o.FailedRequests != 4 || !o.Recovered || o.Straddled != 2 || o.FirstSecond != 0 || o.LastSecond != 1 {
		t.Errorf("outage 1 = %+v", o)
	}
	if o2 := got.Outages[1]; o2.Recovered || o2.Seconds != 0 || o2.Failures["READONLY"] != 2 {
		t.Errorf("outage 2 = %+v", o2)
	}
	if len(got.Seconds) != 3 || got.Seconds[0].OK != 2 || got.Seconds[0].Failures["reset"] != 3 || got.Seconds[0].Failures["refused"] != 1 {
		t.Errorf("seconds = %+v", got.Seconds)
	}
	var b strings.Builder
	writeFailover(&b, "T: ", got)
	want := `T: failover: 6 requests failed, 1 connects failed, 0 reconnects
T: outage 1: 1.100 s long, from 0.200 s to 1.300 s of the run (seconds 0-1), recovered; 4 requests failed (LOADING 1, refused 1, reset 3); 2 answered across it: p50 50.070 p99 553.648 max 553.648 msec
T: outage 2: 0.000 s long, from 2.500 s to 2.500 s of the run (seconds 2-2), not recovered when the run ended; 2 requests failed (READONLY 2)
T: second 0: 2 ok, failed refused 1, reset 3
T: second 1: 1 ok, failed LOADING 1
T: second 2: 0 ok, failed READONLY 2
`
	if b.String() != want {
		t.Errorf("terminal:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestReconnectClusterFailover promotes a replica with CLUSTER FAILOVER
// mid-run: the load follows the new primary (MOVED, then the refreshed
// slot map), and the successes are the nodes' calls.
func TestReconnectClusterFailover(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	o := clusterOptions(c)
	o.Clients, o.Requests, o.Duration, o.Reconnect = 4, 0, 4*time.Second, true
	o.Keys.Space = 100000
	var started <-chan struct{}
	o.Progress, started = afterRequests(2000)
	o.ProgressInterval = 20 * time.Millisecond
	replica := c.Replicas[0]
	done := make(chan time.Duration, 1)
	go func() {
		<-started
		cl := redistest.Client(t, replica)
		t0 := time.Now()
		redistest.Do(t, cl, "CLUSTER", "FAILOVER")
		for time.Since(t0) < 10*time.Second {
			if v := redistest.Do(t, cl, "ROLE"); len(v.Elems) > 0 && v.Elems[0].Str == "master" {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		done <- time.Since(t0)
	}()
	sum, err := Run(context.Background(), o, delTest, nil)
	took := <-done
	if err != nil {
		t.Fatalf("the run ended: %v", err)
	}
	var total int64
	var onNew int64
	for _, s := range c.Nodes() {
		n := calls(t, s, "del")
		total += n
		if s == replica {
			onNew = n
		}
	}
	f := sum.Failover
	t.Logf("failover took %v; successes %d, nodes' calls %d (%d on the new primary); moved %d, refreshes %d; %+v",
		took, sum.Requests, total, onNew, sum.Cluster.Moved, sum.Cluster.Refreshes, f)
	if sum.Requests != total {
		t.Errorf("successes %d, the nodes' calls %d", sum.Requests, total)
	}
	if onNew == 0 || sum.Cluster.Moved == 0 {
		t.Errorf("the load did not follow the new primary: %d calls there, %d MOVED", onNew, sum.Cluster.Moved)
	}
	if f == nil {
		t.Fatal("no failover figures")
	}
	checkSeconds(t, f)
}

// TestSentinelFailover forces a Sentinel failover mid-run: the old
// primary, made a replica, answers -READONLY, the run asks Sentinel and
// sends the load to the new primary; the successes are the two servers'
// calls (a DEL of a missing key is never replicated).
func TestSentinelFailover(t *testing.T) {
	primary := redistest.Start(t)
	replica := redistest.Start(t, fmt.Sprintf("replicaof %s %d", primary.Host, primary.Port))
	rc := redistest.Client(t, replica)
	for !strings.Contains(redistest.Do(t, rc, "INFO", "replication").Str, "master_link_status:up") {
		time.Sleep(10 * time.Millisecond)
	}
	sentinel := redistest.StartSentinel(t, primary, "mymaster", 1)
	o := DefaultOptions()
	o.Seed, o.Sentinel, o.MasterName = 1, sentinel.Addr(), "mymaster"
	o.Clients, o.Requests, o.Duration = 4, 0, 8*time.Second
	o.Keys.Space = 100000
	var started <-chan struct{}
	o.Progress, started = afterRequests(2000)
	o.ProgressInterval = 20 * time.Millisecond
	go func() {
		<-started
		sc := redistest.Client(t, sentinel)
		for range 100 { // -NOGOODSLAVE until Sentinel has seen the replica linked
			if v := redistest.Do(t, sc, "SENTINEL", "FAILOVER", "mymaster"); !v.IsError() {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	sum, err := Run(context.Background(), o, delTest, nil)
	if err != nil {
		t.Fatalf("the run ended: %v", err)
	}
	before, after := calls(t, primary, "del"), calls(t, replica, "del")
	f := sum.Failover
	if f == nil {
		t.Fatal("no failover figures")
	}
	t.Logf("successes %d = %d on the old primary + %d on the new; failover %+v", sum.Requests, before, after, f)
	if sum.Requests != before+after {
		t.Errorf("successes %d, the servers' calls %d + %d", sum.Requests, before, after)
	}
	if after == 0 || f.Switches != 1 || f.Primary != replica.Addr() {
		t.Errorf("the load did not follow the new primary %s: %d calls there, %d switches, last %s", replica.Addr(), after, f.Switches, f.Primary)
	}
	checkSeconds(t, f)
}

// TestReconnectCountsErrorReplies: a write to a replica is answered
// -READONLY; with --reconnect each is a failed request of that kind and
// the run goes on to its end.
func TestReconnectCountsErrorReplies(t *testing.T) {
	primary := redistest.Start(t)
	replica := redistest.Start(t, fmt.Sprintf("replicaof %s %d", primary.Host, primary.Port))
	o := testOptions(replica)
	o.Clients, o.Requests, o.Duration, o.Reconnect = 2, 0, 500*time.Millisecond, true
	sum, err := Run(context.Background(), o, delTest, nil)
	if err != nil {
		t.Fatalf("the run ended: %v", err)
	}
	f := sum.Failover
	if sum.Requests != 0 || f == nil || f.FailedRequests == 0 || sum.ErrorsByType["READONLY"] != f.FailedRequests || len(f.Outages) != 1 || f.Outages[0].Recovered {
		t.Fatalf("requests %d, errors %v, failover %+v", sum.Requests, sum.ErrorsByType, f)
	}
	checkSeconds(t, f)
}
