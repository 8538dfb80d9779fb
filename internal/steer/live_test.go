package steer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"redline/internal/host"
	"redline/internal/netns"
	"redline/internal/redisserver"
	"redline/internal/redistest"
	"redline/internal/resp"
	"redline/internal/testutil"
)

// mqPair is two namespaces joined by a 4-queue veth pair with GRO on and
// TSO/GSO off at both ends, so received skbs pass through NAPI and
// napi_gro_receive_entry.
type mqPair struct {
	Server, Client     string
	ServerIf, ClientIf string
	ServerIP, ClientIP string
}

func newMQPair(t *testing.T) *mqPair {
	t.Helper()
	removeStaleMQ()
	id := strconv.Itoa(os.Getpid())
	p := &mqPair{
		Server: "rlst-" + id + "-srv", Client: "rlst-" + id + "-cli",
		ServerIf: "rlst" + id + "s", ClientIf: "rlst" + id + "c",
		ServerIP: "10.78.0.1", ClientIP: "10.78.0.2",
	}
	t.Cleanup(func() {
		run("ip", "netns", "del", p.Server)
		run("ip", "netns", "del", p.Client)
	})
	steps := [][]string{
		{"ip", "netns", "add", p.Server},
		{"ip", "netns", "add", p.Client},
		{"ip", "link", "add", p.ServerIf, "numrxqueues", "4", "numtxqueues", "4", "type", "veth",
			"peer", "name", p.ClientIf, "numrxqueues", "4", "numtxqueues", "4"},
		{"ip", "link", "set", p.ServerIf, "netns", p.Server},
		{"ip", "link", "set", p.ClientIf, "netns", p.Client},
		{"ip", "-n", p.Server, "addr", "add", p.ServerIP + "/30", "dev", p.ServerIf},
		{"ip", "-n", p.Client, "addr", "add", p.ClientIP + "/30", "dev", p.ClientIf},
		{"ip", "-n", p.Server, "link", "set", "lo", "up"},
		{"ip", "-n", p.Client, "link", "set", "lo", "up"},
		{"ip", "netns", "exec", p.Server, "ethtool", "-K", p.ServerIf, "gro", "on", "tso", "off", "gso", "off"},
		{"ip", "netns", "exec", p.Client, "ethtool", "-K", p.ClientIf, "gro", "on", "tso", "off", "gso", "off"},
		{"ip", "-n", p.Server, "link", "set", p.ServerIf, "up"},
		{"ip", "-n", p.Client, "link", "set", p.ClientIf, "up"},
	}
	for _, s := range steps {
		if err := run(s...); err != nil {
			t.Fatalf("multi-queue veth: %v", err)
		}
	}
	return p
}

// removeStaleMQ deletes the namespaces of earlier test processes that
// died before their cleanup ran (a crash, a kill): rlst-PID-* with PID gone.
func removeStaleMQ() {
	ents, _ := os.ReadDir("/run/netns")
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), "rlst-")
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
		if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
			continue
		}
		run("ip", "netns", "del", e.Name())
	}
}

func run(argv ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func needRoot(t *testing.T) {
	t.Helper()
	testutil.NeedRoot(t)
	testutil.Need(t, "ip", "ethtool", "redis-server")
}

// liveVeth is the set-up of the live sampler tests: root, tracefs (the
// test is skipped without it), a multi-queue veth pair and a redis-server
// in its server end.
func liveVeth(t *testing.T) (*Tracefs, *mqPair, *redisserver.Server) {
	t.Helper()
	needRoot(t)
	tfs, err := OpenTracefs()
	if err != nil {
		t.Skipf("tracefs: %v", err)
	}
	t.Cleanup(func() { tfs.Close() })
	p := newMQPair(t)
	return tfs, p, redistest.StartWith(t, redisserver.Options{NetNS: p.Server, Bind: p.ServerIP})
}

// TestLiveSamplerAttributesVethQueuesToRedis sends Redis traffic from
// the client namespace over a 4-queue veth and waits until the sampler
// has attributed the server end's queues to the redis-server process,
// consumed on the CPU redis-server is pinned to.
func TestLiveSamplerAttributesVethQueuesToRedis(t *testing.T) {
	needRoot(t)
	tfs, err := OpenTracefs()
	if err != nil {
		t.Skipf("tracefs: %v", err)
	}
	t.Cleanup(func() { tfs.Close() })
	p := newMQPair(t)
	const redisCPU = 1
	srv := redistest.StartWith(t, redisserver.Options{
		NetNS: p.Server, Bind: p.ServerIP, Wrap: [][]string{{"taskset", "-c", strconv.Itoa(redisCPU)}},
	})
	s, err := NewSampler(tfs, SamplerOptions{Drain: 10 * time.Millisecond, Sample: 2, Consumers: threadsOf(t, srv.Pid())})
	if err != nil {
		t.Skipf("sampler: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	s.Joiner.Target = map[uint32]bool{uint32(srv.Pid()): true}
	s.Joiner.ZeroBased = DriverQueues(map[string]string{p.ServerIf: "veth"})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	load := startLoad(ctx, t, p, srv, 8)

	periods := make(chan *Period, 1)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, 100*time.Millisecond, periods) }()
	queues := map[int]bool{}
	for len(queues) < 2 {
		var per *Period
		select {
		case per = <-periods:
		case err := <-load:
			t.Fatalf("load stopped: %v", err)
		case err := <-done:
			t.Fatalf("sampler stopped: %v", err)
		}
		for k, qc := range per.Queues {
			if k.Dev != p.ServerIf || qc.Matched == 0 {
				continue
			}
			if q := k.Queue; q < 0 || q >= 4 {
				t.Fatalf("queue %d of a 4-queue veth: %+v", q, k)
			}
			for cpu := range qc.Consumers {
				if cpu != redisCPU {
					t.Fatalf("queue %d consumed on cpu %d, redis-server is pinned to %d", k.Queue, cpu, redisCPU)
				}
			}
			queues[k.Queue] = true
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("sampler: %v", err)
	}
	t.Logf("queues attributed to redis-server: %v; stats %+v", queues, s.Stats())
}

// threadsOf lists a process's thread ids.
func threadsOf(t *testing.T, pid int) []int {
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		t.Fatal(err)
	}
	var tids []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids
}

// TestLiveRunDryRun runs the daemon loop (dry run) on the live host while
// Redis traffic crosses the veth, and waits for a period whose report
// attributes the server end's queues to the redis-server process. veth
// queues have no IRQs, so there is nothing to move.
func TestLiveRunDryRun(t *testing.T) {
	tfs, p, srv := liveVeth(t)
	s, err := NewSampler(tfs, SamplerOptions{Drain: 10 * time.Millisecond})
	if err != nil {
		t.Skipf("sampler: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	fs, err := host.NewFS("/")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	load := startLoad(ctx, t, p, srv, 4)
	reports := make(chan *Report, 100)
	cfg := Config{
		Period: 100 * time.Millisecond, PIDs: []int{srv.Pid()},
		Read:     func() (*host.Snapshot, error) { return host.Read(fs, host.Options{PIDs: []int{srv.Pid()}}) },
		ReadFile: fs.ReadFile,
		OnPeriod: func(r *Report) {
			select {
			case reports <- r:
			default:
			}
		},
	}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, s, cfg) }()
	for {
		select {
		case err := <-load:
			t.Fatalf("load stopped: %v", err)
		case err := <-done:
			t.Fatalf("Run stopped: %v", err)
		case r := <-reports:
			if !r.DryRun || len(r.Applied) != 0 {
				t.Fatalf("a dry run applied moves: %+v", r)
			}
			for _, qs := range r.Decision.Queues {
				if qs.Queue.Dev == p.ServerIf {
					t.Fatalf("veth has no queue IRQs, yet the decision has %+v", qs)
				}
			}
			var matched uint64
			for k, qc := range r.Period.Queues {
				if k.Dev == p.ServerIf {
					matched += qc.Matched
				}
			}
			if matched == 0 {
				continue
			}
			t.Logf("%s", r.Line())
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("Run: %v", err)
			}
			return
		}
	}
}

// startLoad runs n connections of SET/GET from the client namespace until
// ctx ends; the channel reports a connection's failure.
func startLoad(ctx context.Context, t *testing.T, p *mqPair, srv *redisserver.Server, n int) <-chan error {
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		cl, err := resp.Dial(ctx, resp.DialOptions{Addr: srv.Addr(), Dial: netns.Dialer(p.Client)})
		if err != nil {
			t.Fatalf("dial from client namespace: %v", err)
		}
		t.Cleanup(func() { cl.Close() })
		go func(i int) {
			key := "k" + strconv.Itoa(i)
			for ctx.Err() == nil {
				if _, err := cl.Do(ctx, "SET", key, "v"); err != nil {
					if ctx.Err() == nil {
						errs <- err
					}
					return
				}
			}
		}(i)
	}
	return errs
}

// TestLiveRunFollowsRedisRestart steers (dry run) for the redis-server
// listening on a port while Redis traffic crosses a 4-queue veth; the
// server is stopped and a new one started on the same port: steer must
// notice, re-target the kernel's thread filter to the new process, and
// attribute the veth's queues to it.
func TestLiveRunFollowsRedisRestart(t *testing.T) {
	tfs, p, srv1 := liveVeth(t)
	port := srv1.Port
	newSampler := func(tids []int) (Source, error) {
		return NewSampler(tfs, SamplerOptions{Drain: 10 * time.Millisecond, Sample: 2, Consumers: tids})
	}
	s1, err := newSampler(threadsOf(t, srv1.Pid()))
	if err != nil {
		t.Skipf("sampler: %v", err)
	}
	t.Cleanup(func() { s1.(*Sampler).Close() })
	fs, err := host.NewFS("/")
	if err != nil {
		t.Fatal(err)
	}
	reports := make(chan *Report, 100)
	cfg := Config{
		Period: 100 * time.Millisecond, PIDs: []int{srv1.Pid()}, ReadFile: fs.ReadFile,
		Read:      func() (*host.Snapshot, error) { return host.Read(fs, host.Options{Ports: []int{port}}) },
		Targets:   func(s *host.Snapshot) ([]int, error) { return PIDsOnPorts(s, nil, []int{port}) },
		NewSource: newSampler,
		Drivers:   map[string]string{p.ServerIf: "veth"},
		OnPeriod: func(r *Report) {
			select {
			case reports <- r:
			default:
			}
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, s1, cfg) }()

	// waitMatched waits for a period steering for pid whose veth queues
	// had packets copied by it.
	waitMatched := func(pid int, load <-chan error) {
		t.Helper()
		deadline := time.After(60 * time.Second)
		for {
			select {
			case err := <-load:
				t.Fatalf("load stopped: %v", err)
			case err := <-done:
				t.Fatalf("Run stopped: %v", err)
			case <-deadline:
				t.Fatalf("no period attributed the veth's queues to pid %d", pid)
			case r := <-reports:
				var matched uint64
				for k, qc := range r.Period.Queues {
					if k.Dev == p.ServerIf && k.Queue >= 0 && k.Queue < 4 {
						matched += qc.Matched
					}
				}
				// The period that noticed the restart was sampled for the old
				// target; only the next ones are the new sampler's.
				retargeted := strings.Contains(strings.Join(r.NotDone, ";"), "target restarted")
				if len(r.Targets) == 1 && r.Targets[0] == pid && matched > 0 && !retargeted {
					t.Logf("pid %d: %s", pid, r.Line())
					return
				}
			}
		}
	}
	ctx1, stop1 := context.WithCancel(ctx)
	waitMatched(srv1.Pid(), startLoad(ctx1, t, p, srv1, 4))
	stop1()
	if err := srv1.Stop(); err != nil {
		t.Fatal(err)
	}
	srv2 := redistest.StartWith(t, redisserver.Options{NetNS: p.Server, Bind: p.ServerIP, Port: port})
	waitMatched(srv2.Pid(), startLoad(ctx, t, p, srv2, 4))
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
}

// TestLiveConfigureWhileRunning: a retarget reconfigures the sampler while
// its loop reads the rings (a restarted server's new pid); the Joiner is
// the loop's alone, so under -race nothing is reported while copies are
// joined and Configure is called from another goroutine, and the last
// configuration is the one applied.
func TestLiveConfigureWhileRunning(t *testing.T) {
	tfs, p, srv := liveVeth(t)
	s, err := NewSampler(tfs, SamplerOptions{Drain: time.Millisecond})
	if err != nil {
		t.Skipf("sampler: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	startLoad(ctx, t, p, srv, 2)
	out := make(chan *Period, 1)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, 20*time.Millisecond, out) }()
	for i := range 200 {
		s.Configure(map[uint32]bool{uint32(srv.Pid() + i%2): true}, nil)
		time.Sleep(time.Millisecond)
	}
	s.Configure(map[uint32]bool{uint32(srv.Pid()): true}, nil)
	<-out
	<-out // a period cut after the last Configure was applied
	cancel()
	<-done
	if !s.Joiner.Target[uint32(srv.Pid())] || len(s.Joiner.Target) != 1 {
		t.Fatalf("the Joiner's target after the last Configure: %v", s.Joiner.Target)
	}
}
