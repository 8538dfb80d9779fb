package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"redline/internal/benchdata"
	"redline/internal/testutil/respscript"
)

// The faults here come from a scripted server: each test names the request
// that misbehaves and checks what the run made of it, with no sleeps and no
// bounds on how long anything took.

func scriptedOptions(s *respscript.Server) Options {
	o := DefaultOptions()
	o.Addr = s.Addr()
	o.Seed = 1
	o.Clients, o.Requests = 4, 1_000_000 // the fault ends the run long before
	return o
}

func runSuiteTest(t *testing.T, o Options, name string) (*benchdata.Summary, error) {
	t.Helper()
	tests, err := SuiteTests([]string{name}, false)
	if err != nil {
		t.Fatal(err)
	}
	return Run(context.Background(), o, tests[0], nil)
}

func TestRunErrorReplyNamesTheCommand(t *testing.T) {
	s := respscript.Start(t, respscript.Options{Script: respscript.OnNth("SET", 50, respscript.Error("ERR injected"))})
	sum, err := runSuiteTest(t, scriptedOptions(s), "set")
	if err == nil || !strings.Contains(err.Error(), "Error from server: ERR injected") || !strings.Contains(err.Error(), `"SET key:__rand_int__`) {
		t.Fatalf("err = %v; want the error reply and the command it answered", err)
	}
	if sum == nil || sum.Error == "" || sum.Requests == 0 {
		t.Errorf("partial summary: %+v", sum)
	}
}

func TestRunServerClosesConnection(t *testing.T) {
	s := respscript.Start(t, respscript.Options{Script: respscript.OnNth("SET", 100, respscript.Close())})
	sum, err := runSuiteTest(t, scriptedOptions(s), "set")
	if err == nil || !strings.Contains(err.Error(), "Server closed the connection") || !strings.Contains(err.Error(), s.Addr()) {
		t.Fatalf("err = %v; want the closed connection named", err)
	}
	if sum == nil || sum.Requests == 0 || sum.Error == "" {
		t.Errorf("partial summary: %+v", sum)
	}
}

func TestRunStalledServerTimesOut(t *testing.T) {
	s := respscript.Start(t, respscript.Options{Script: respscript.OnNth("SET", 100, respscript.Stall())})
	o := scriptedOptions(s)
	o.Timeout = 200 * time.Millisecond
	_, err := runSuiteTest(t, o, "set")
	if err == nil || !strings.Contains(err.Error(), "stopped answering") || !strings.Contains(err.Error(), "requests outstanding") {
		t.Fatalf("err = %v; want a timeout naming the outstanding requests", err)
	}
}

// TestRunRateModeCountsStallFromDueTime: while one reply is held back, the
// open-loop schedule keeps running; the requests that fall due meanwhile
// are late, and their latency counts from when they were due. Counted from
// the actual write, only the held-back request is slow.
func TestRunRateModeCountsStallFromDueTime(t *testing.T) {
	const hold = 300 * time.Millisecond
	s := respscript.Start(t, respscript.Options{Script: respscript.OnNth("GET", 200, respscript.Delay(hold))})
	o := scriptedOptions(s)
	o.Rate, o.Requests, o.Clients, o.MaxPending = 2000, 1000, 1, 1
	sum, err := runSuiteTest(t, o, "get")
	if err != nil {
		t.Fatal(err)
	}
	if sum.Requests != 1000 || s.Count("GET") != 1000 {
		t.Errorf("measured %d, server saw %d GETs; want 1000 each", sum.Requests, s.Count("GET"))
	}
	if sum.Uncorrected == nil {
		t.Fatal("no uncorrected latency in rate mode")
	}
	// Hundreds of the 1000 requests fall due during the hold, so the
	// corrected p99 is most of it; uncorrected, one request in 1000 is.
	if sum.Latency.P99 < float64(hold.Milliseconds())/3 || sum.Uncorrected.P99 > sum.Latency.P99/2 {
		t.Errorf("corrected p99 %.3f ms, uncorrected p99 %.3f ms: want the hold visible only in the corrected figure", sum.Latency.P99, sum.Uncorrected.P99)
	}
}
