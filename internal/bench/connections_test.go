package bench

import (
	"strings"
	"testing"
	"time"

	"redline/internal/testutil/respscript"
)

// TestRunReportsConnectionSetUp: every connection's set-up is measured,
// to established and to the reply to its set-up commands; a server that
// delays AUTH by D shows ready times of at least D.
func TestRunReportsConnectionSetUp(t *testing.T) {
	const delay = 5 * time.Millisecond
	s := respscript.Start(t, respscript.Options{Password: "pw", Script: func(r respscript.Request) respscript.Action {
		if r.Cmd == "AUTH" {
			return respscript.Delay(delay)
		}
		return respscript.Reply()
	}})
	o := scriptedOptions(s)
	o.Password, o.Clients, o.Requests, o.Threads = "pw", 6, 60, 2
	sum, err := runSuiteTest(t, o, "set")
	if err != nil {
		t.Fatal(err)
	}
	c := sum.Connections
	if c == nil || c.Opened != 6 || c.ConnectHistogram.TotalCount() != 6 || c.ReadyHistogram.TotalCount() != 6 {
		t.Fatalf("connections = %+v, want 6 measured", c)
	}
	if c.Ready.P50 < ms(delay) || c.Connect.Max > c.Ready.Max || c.SetupSeconds < delay.Seconds() || len(c.Failures) != 0 {
		t.Errorf("connections = %+v: want ready >= the %v AUTH delay, after connect, and no failures", c, delay)
	}
}

// TestRunCountsConnectFailures: with -k 0, a reconnect the server refuses
// ends the run, and the partial results count the failure by errno.
func TestRunCountsConnectFailures(t *testing.T) {
	s := respscript.Start(t, respscript.Options{Script: respscript.OnNth("SET", 20, respscript.Stall())})
	o := scriptedOptions(s)
	o.KeepAlive, o.Clients = false, 1 // no other connection is being accepted when the listener closes
	go func() {
		<-s.Seen("SET", 20)
		s.StopListening()
		s.Release()
	}()
	sum, err := runSuiteTest(t, o, "set")
	if err == nil || !strings.Contains(err.Error(), "Connection refused") {
		t.Fatalf("err = %v, want the refused reconnect", err)
	}
	if sum == nil || sum.Connections == nil || sum.Connections.Failures["ECONNREFUSED"] != 1 || sum.Connections.Retries != 0 {
		t.Fatalf("partial summary connections = %+v, want one ECONNREFUSED, not retried", sum.Connections)
	}
}

// TestRunRetriesConnects: with --connect-retries 2 a refused reconnect is
// dialled twice more, each failure counted, before the run ends.
func TestRunRetriesConnects(t *testing.T) {
	s := respscript.Start(t, respscript.Options{Script: respscript.OnNth("SET", 20, respscript.Stall())})
	o := scriptedOptions(s)
	o.KeepAlive, o.Clients, o.ConnectRetries = false, 1, 2
	go func() {
		<-s.Seen("SET", 20)
		s.StopListening()
		s.Release()
	}()
	sum, err := runSuiteTest(t, o, "set")
	if err == nil || sum == nil || sum.Connections == nil {
		t.Fatalf("err = %v, summary %+v: want the refused reconnect and partial results", err, sum)
	}
	if c := sum.Connections; c.Failures["ECONNREFUSED"] != 3 || c.Retries != 2 {
		t.Errorf("connections = %+v, want 3 ECONNREFUSED, 2 retried", c)
	}
}
