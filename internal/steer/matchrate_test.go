package steer

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"redline/internal/host"
)

// TestLiveMatchRate measures what share of the server end's GRO entries
// the sampler matches to a copy by redis-server, with the load of 8
// clients over a 4-queue veth (the figure docs/steer.md states). It is a
// measurement, not a bound: it logs the shares and fails only when
// nothing matched. REDLINE_MEASURE_MATCH=1 runs it.
func TestLiveMatchRate(t *testing.T) {
	if os.Getenv("REDLINE_MEASURE_MATCH") != "1" {
		t.Skip("a measurement: REDLINE_MEASURE_MATCH=1 runs it")
	}
	tfs, p, srv := liveVeth(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var load <-chan error
	if extra := os.Getenv("REDLINE_MEASURE_LOAD"); extra != "" {
		// redis-benchmark from the client namespace, with these options.
		args := append([]string{"netns", "exec", p.Client, "redis-benchmark", "-h", p.ServerIP, "-p", strconv.Itoa(srv.Port), "-l", "-q"}, strings.Fields(extra)...)
		cmd := exec.CommandContext(ctx, "ip", args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		time.Sleep(500 * time.Millisecond)
	} else {
		load = startLoad(ctx, t, p, srv, 8)
	}
	for _, sample := range []int{1, 8} {
		s, err := NewSampler(tfs, SamplerOptions{Sample: sample, Consumers: threadsOf(t, srv.Pid())})
		if err != nil {
			t.Skipf("sampler: %v", err)
		}
		s.Joiner.Target = map[uint32]bool{uint32(srv.Pid()): true}
		s.Joiner.ZeroBased = DriverQueues(map[string]string{p.ServerIf: "veth", p.ClientIf: "veth"})
		rctx, rcancel := context.WithTimeout(ctx, 3*time.Second)
		periods := make(chan *Period, 8)
		done := make(chan error, 1)
		go func() { done <- s.Run(rctx, time.Second, periods) }()
		var srvRx, srvMatched, allRx, unmatched uint64
		for n := 0; n < 3; n++ {
			select {
			case per := <-periods:
				for k, qc := range per.Queues {
					allRx += qc.Received
					if k.Dev == p.ServerIf {
						srvRx += qc.Received
						srvMatched += qc.Matched
					}
				}
				unmatched += per.Unmatched
			case err := <-load:
				t.Fatalf("load: %v", err)
			case <-done:
				n = 3
			}
		}
		rcancel()
		<-done
		s.Close()
		t.Logf("--sample %d: server end %d GRO entries, %d matched (%.1f%%); all ends %d entries (%.1f%% matched); %d copies without a GRO entry seen",
			sample, srvRx, srvMatched, 100*float64(srvMatched)/float64(max(srvRx, 1)), allRx, 100*float64(srvMatched)/float64(max(allRx, 1)), unmatched)
		if srvMatched == 0 {
			t.Errorf("--sample %d: nothing matched", sample)
		}
	}
}

// TestLiveMatchRateDaemon is TestLiveMatchRate through Run, as redline
// steer --dry-run -p PORT runs it (period 1 s, --sample 8, the kernel
// filter on redis-server's threads): it logs each period's line and the
// server end's share.
func TestLiveMatchRateDaemon(t *testing.T) {
	if os.Getenv("REDLINE_MEASURE_MATCH") != "1" {
		t.Skip("a measurement: REDLINE_MEASURE_MATCH=1 runs it")
	}
	tfs, p, srv := liveVeth(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	startLoad(ctx, t, p, srv, 8)
	fs, err := host.NewFS("/")
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSampler(tfs, SamplerOptions{Sample: DefaultSample, Consumers: threadsOf(t, srv.Pid())})
	if err != nil {
		t.Skipf("sampler: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	cfg := Config{
		Period: time.Second, PIDs: []int{srv.Pid()}, Drivers: map[string]string{p.ServerIf: "veth", p.ClientIf: "veth"},
		Read:     func() (*host.Snapshot, error) { return host.Read(fs, host.Options{PIDs: []int{srv.Pid()}}) },
		ReadFile: fs.ReadFile,
		OnPeriod: func(r *Report) {
			var srvRx, m uint64
			for k, qc := range r.Period.Queues {
				if k.Dev == p.ServerIf {
					srvRx += qc.Received
					m += qc.Matched
				}
			}
			t.Logf("%s; server end %d of %d (%.1f%%)", r.Line(), m, srvRx, 100*float64(m)/float64(max(srvRx, 1)))
		},
	}
	Run(ctx, s, cfg)
}
