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

// TestRunRateModeSendsWhatIsDueBeforeTheEnd: a reply held back past the
// end of --duration leaves the requests that fell due meanwhile unsent
// (one connection, --max-pending 1). They are still sent once the
// connection frees up and count from their due time, so the run has
// exactly the requests due in the duration and the stall shows.
func TestRunRateModeSendsWhatIsDueBeforeTheEnd(t *testing.T) {
	const hold = time.Second
	s := respscript.Start(t, respscript.Options{Script: respscript.OnNth("GET", 900, respscript.Delay(hold))})
	o := scriptedOptions(s)
	o.Rate, o.Duration, o.Requests, o.Clients, o.MaxPending = 1000, time.Second, 0, 1, 1
	sum, err := runSuiteTest(t, o, "get")
	if err != nil {
		t.Fatal(err)
	}
	// Due times are start + n ms, so exactly requests 0..999 fall due
	// before the end.
	if sum.Requests != 1000 || s.Count("GET") != 1000 {
		t.Errorf("measured %d, server saw %d GETs; want the 1000 due before the end", sum.Requests, s.Count("GET"))
	}
	// The ~100 requests due behind the held reply wait for it: 10% of
	// the run is slower than half the hold.
	if sum.Latency.P99 < ms(hold)/2 {
		t.Errorf("corrected p99 %.3f ms: the %v hold past the end is hidden", sum.Latency.P99, hold)
	}
	if sum.Drain == nil || sum.Drain.Expired() || sum.Drain.LimitSeconds != DefaultDrain.Seconds() {
		t.Errorf("drain = %+v, want reported, within the default limit", sum.Drain)
	}
}

// TestRunRateModeDrainLimit: a reply that never comes ends the drain at
// its limit, and what it cut off is counted, not timed.
func TestRunRateModeDrainLimit(t *testing.T) {
	s := respscript.Start(t, respscript.Options{Script: respscript.OnNth("GET", 100, respscript.Stall())})
	o := scriptedOptions(s)
	o.Rate, o.Duration, o.Requests, o.Clients, o.MaxPending = 1000, 300*time.Millisecond, 0, 1, 1
	o.Drain = 200 * time.Millisecond
	sum, err := runSuiteTest(t, o, "get")
	if err != nil {
		t.Fatal(err)
	}
	// 300 requests fall due in the duration; the 100th is never answered,
	// so at most 100 are sent (fewer only if this machine lags that far).
	d, sent := sum.Drain, s.Count("GET")
	if d == nil || !d.Expired() || d.LimitSeconds != 0.2 || sent > 100 || d.Unsent+sent != 300 || sum.Requests+d.Unanswered != sent {
		t.Fatalf("drain = %+v, %d measured, server saw %d GETs: want every one of the 300 due sent and measured, still outstanding, or unsent", d, sum.Requests, sent)
	}
	if sent == 100 && (d.Unsent != 200 || d.Unanswered != 1 || sum.Requests != 99) {
		t.Errorf("drain = %+v, %d measured: want 200 unsent, 1 unanswered, 99 measured", d, sum.Requests)
	}
}

// TestRunMaxClientsRefusalNamed: a server at maxclients answers a new
// connection with an error and closes it. Whether the client reads that
// before any request, as the answer to its set-up commands or to its
// first request, or fails to write first, the message names the refusal
// and never blames the command.
func TestRunMaxClientsRefusalNamed(t *testing.T) {
	cases := []struct {
		name string
		set  func(*Options)
	}{
		{"no set-up commands", func(*Options) {}},
		{"AUTH first", func(o *Options) { o.Password = "pw" }},
		{"HELLO 3 first", func(o *Options) { o.RESP3 = true }},
		{"two loops", func(o *Options) { o.Threads = 2 }},
	}
	for _, c := range cases {
		for i := range 5 {
			s := respscript.Start(t, respscript.Options{MaxClients: 3, Password: map[bool]string{true: "pw"}[c.name == "AUTH first"]})
			o := scriptedOptions(s)
			o.Clients = 8
			c.set(&o)
			_, err := runSuiteTest(t, o, "set")
			if err == nil || !strings.Contains(err.Error(), "refused a connection: ERR max number of clients reached") ||
				!strings.Contains(err.Error(), "maxclients") || strings.Contains(err.Error(), "in reply to") {
				t.Errorf("%s, run %d: err = %v; want the maxclients refusal named", c.name, i, err)
			}
			s.Close()
		}
	}
}
