package bench

import (
	"testing"
	"time"

	"redline/internal/testutil/respscript"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestProgressIntervalsCoverEveryReply: each progress call covers exactly
// the replies since the previous one. One connection, and the server holds
// the 100th SET until the test has seen two calls during the hold: the
// call whose interval contains that reply must show it in its max, and the
// interval counts must add up to the total.
func TestProgressIntervalsCoverEveryReply(t *testing.T) {
	hold := func(r respscript.Request) respscript.Action {
		if r.Cmd == "SET" && (r.N == 100 || r.N == 200) {
			return respscript.Stall()
		}
		return respscript.Reply()
	}
	s := respscript.Start(t, respscript.Options{Script: hold})
	o := scriptedOptions(s)
	o.Clients, o.Requests, o.ProgressInterval, o.ProgressFinal = 1, 300, 2*time.Millisecond, true
	var calls []Progress
	// The hold covered at least t1..t2: t1 is the time of the first call
	// taken after one saw the 100th SET arrive (a call's Elapsed is taken
	// before it runs: under load, well before), t2 of the call that
	// releases it.
	var t1, t2 time.Duration
	var held bool
	o.Progress = func(p Progress) {
		calls = append(calls, p)
		switch {
		case !held && p.Requests == 99 && closed(s.Seen("SET", 100)):
			held = true
		case held && t1 == 0:
			t1 = p.Elapsed
		case t1 != 0 && t2 == 0:
			t2 = p.Elapsed
			s.Release()
		case t2 != 0 && p.Requests == 199 && closed(s.Seen("SET", 200)):
			s.Release()
		}
	}
	sum, err := runSuiteTest(t, o, "set")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	var shown bool
	for _, p := range calls {
		if total < 100 && total+p.IntervalRequests >= 100 {
			// The interval in which reply 100 arrived.
			shown = p.IntervalMax >= ms(t2-t1)
			if !shown {
				t.Errorf("interval with the held reply: %+v; want max >= %.3f ms", p, ms(t2-t1))
			}
		}
		total += p.IntervalRequests
		if p.Requests != total {
			t.Fatalf("call %+v: the intervals so far add up to %d requests", p, total)
		}
	}
	if t2 == 0 || total != 300 || sum.Requests != 300 || !calls[len(calls)-1].Final {
		t.Errorf("hold seen %v..%v, intervals covered %d, run measured %d: want all 300 covered, the last by the final call", t1, t2, total, sum.Requests)
	}
}
