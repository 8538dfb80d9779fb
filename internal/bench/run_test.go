package bench

import (
	"context"
	"strings"
	"testing"

	"redline/internal/redisserver"
	"redline/internal/redistest"
)

func testOptions(s *redisserver.Server) Options {
	o := DefaultOptions()
	o.Addr = s.Addr()
	o.Seed = 1
	return o
}

func TestRunSetExactCount(t *testing.T) {
	s := redistest.Start(t)
	o := testOptions(s)
	o.Clients, o.Requests, o.Pipeline = 7, 1000, 3
	o.Keys.Space = 100000
	tests, _ := SuiteTests([]string{"set"}, true)
	sum, err := Run(context.Background(), o, tests[0], NewPayload().Next(3))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Requests != 1000 {
		t.Errorf("Requests = %d, want 1000", sum.Requests)
	}
	c := redistest.Client(t, s)
	v := redistest.Do(t, c, "INFO", "commandstats")
	if !strings.Contains(v.Str, "cmdstat_set:calls=1000,") {
		t.Errorf("server saw %q, want exactly 1000 SET calls", v.Str)
	}
	if sum.RPS <= 0 || sum.Latency.P50 <= 0 || sum.Latency.Max < sum.Latency.P50 {
		t.Errorf("implausible summary: rps %v, latency %+v", sum.RPS, sum.Latency)
	}
	t.Logf("rps %.0f p50 %.3f ms", sum.RPS, sum.Latency.P50)
}

func TestRunPinnedToCPU(t *testing.T) {
	s := redistest.Start(t)
	o := testOptions(s)
	o.Clients, o.Requests, o.Threads, o.CPUs = 4, 2000, 2, []int{0}
	tests, _ := SuiteTests([]string{"ping_mbulk"}, false)
	sum, err := Run(context.Background(), o, tests[0], nil)
	if err != nil || sum.Requests != 2000 {
		t.Fatalf("pinned run: %v, %d requests", err, sum.Requests)
	}
	o.CPUs = []int{5000}
	if _, err := Run(context.Background(), o, tests[0], nil); err == nil {
		t.Error("CPU 5000 accepted")
	}
}
