package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"redline/internal/testutil/respscript"
)

// Issue 35, item 4: the load path's replies come from a server anyone may
// run. Each hostile mode ends the run with an error naming the server,
// before the bench buffers more than maxReply.

// streamLimit bounds what a bench without a limit would buffer here.
const streamLimit = 64 << 20

func TestRunRefusesAnnouncedHugeBulk(t *testing.T) {
	head := []byte("$4294967295\r\n")
	s := respscript.Start(t, respscript.Options{Script: respscript.OnNth("GET", 10,
		respscript.Stream(head, bytes.Repeat([]byte("x"), 64<<10), streamLimit))})
	_, err := runSuiteTest(t, scriptedOptions(s), "get")
	if err == nil || !strings.Contains(err.Error(), "announced a reply of 4294967310 bytes") || !strings.Contains(err.Error(), s.Addr()) {
		t.Fatalf("err = %v; want the announced size refused, naming the server", err)
	}
}

func TestRunRefusesEndlessArray(t *testing.T) {
	head := []byte("*2147483647\r\n")
	s := respscript.Start(t, respscript.Options{Script: respscript.OnNth("GET", 10,
		respscript.Stream(head, bytes.Repeat([]byte("+xxxxxxxxxxxx\r\n"), 4096), streamLimit))})
	o := scriptedOptions(s)
	_, err := runSuiteTest(t, o, "get")
	if err == nil || !strings.Contains(err.Error(), "sent more than") || !strings.Contains(err.Error(), s.Addr()) {
		t.Fatalf("err = %v; want the reply's size refused, naming the server", err)
	}
}

// A reply whose bytes keep coming but never complete within --timeout
// times out: the deadline is per reply, not per read.
func TestRunTimeoutIsPerReply(t *testing.T) {
	reply := append([]byte("$400\r\n"), bytes.Repeat([]byte("x"), 400)...)
	s := respscript.Start(t, respscript.Options{Script: respscript.OnNth("GET", 10,
		respscript.Drip(append(reply, "\r\n"...), 5*time.Millisecond))})
	o := scriptedOptions(s)
	o.Clients, o.Requests, o.Timeout = 1, 100, 200*time.Millisecond
	_, err := runSuiteTest(t, o, "get")
	if err == nil || !strings.Contains(err.Error(), "no reply from "+s.Addr()) {
		t.Fatalf("err = %v; want a timeout naming the server", err)
	}
}

// The limit follows the workload: LRANGE_600 of the largest value fits.
func TestMaxReplyCoversTheSuite(t *testing.T) {
	o := DefaultOptions()
	o.Sizes = SizeSpec{Min: 1, Max: 1 << 20}
	if got, lrange600 := o.maxReply(), 600*((1<<20)+32); got < lrange600 {
		t.Errorf("maxReply %d below LRANGE_600 of 1 MiB values (%d)", got, lrange600)
	}
	o.MaxReply = 5000
	if o.maxReply() != 5000 {
		t.Errorf("MaxReply not honoured: %d", o.maxReply())
	}
}
