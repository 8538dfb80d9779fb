package resp_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"redline/internal/resp"
	"redline/internal/testutil/respscript"
)

func hostile(t *testing.T, reply []byte) (resp.Value, error) {
	t.Helper()
	srv := respscript.Start(t, respscript.Options{Script: respscript.OnNth("INFO", 1, respscript.Raw(reply))})
	c, err := resp.Dial(context.Background(), resp.DialOptions{Addr: srv.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.Do(context.Background(), "INFO")
}

// Issue 24, item 7: 8 MB of "*1" nests two million levels deep; the
// recursive parser overflowed the stack and took the root session (and its
// dead man's switch) down with it. Now it is a protocol error.
func TestClientRefusesDeepNesting(t *testing.T) {
	reply := append(bytes.Repeat([]byte("*1\r\n"), 2<<20), ":1\r\n"...)
	_, err := hostile(t, reply)
	if !errors.Is(err, resp.ErrTooDeep) {
		t.Fatalf("Do = %v, want ErrTooDeep", err)
	}
}

// A chain of attributes, each one describing the next, nests as deep.
func TestClientRefusesDeepAttributes(t *testing.T) {
	reply := append(bytes.Repeat([]byte("|1\r\n+a\r\n+b\r\n"), 1<<20), ":1\r\n"...)
	if _, err := hostile(t, reply); !errors.Is(err, resp.ErrTooDeep) {
		t.Fatalf("Do = %v, want ErrTooDeep", err)
	}
}

// A reply larger than MaxReply is refused once that much has arrived,
// never buffered to the end.
func TestClientCapsReplySize(t *testing.T) {
	reply := append([]byte("*2000000\r\n"), bytes.Repeat([]byte("+xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\r\n"), 2000000)...)
	srv := respscript.Start(t, respscript.Options{Script: respscript.OnNth("INFO", 1, respscript.Raw(reply))})
	c, err := resp.Dial(context.Background(), resp.DialOptions{Addr: srv.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.MaxReply = 1 << 20
	if _, err := c.Do(context.Background(), "INFO"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("Do = %v, want a reply-size error", err)
	}
}

// A nested reply within the limits still parses.
func TestClientParsesModestNesting(t *testing.T) {
	reply := append(bytes.Repeat([]byte("*1\r\n"), resp.MaxDepth), ":7\r\n"...)
	v, err := hostile(t, reply)
	if err != nil {
		t.Fatal(err)
	}
	for range resp.MaxDepth {
		v = v.Elems[0]
	}
	if v.Str != "7" {
		t.Fatalf("innermost %+v", v)
	}
}

// ScanFrom resumed over every split of a reply finds what Scan finds on
// the whole: what the client does as bytes arrive.
func TestScanFromResumes(t *testing.T) {
	for _, r := range []string{
		"*3\r\n*1\r\n*1\r\n:1\r\n$0\r\n\r\n_\r\n", "$5\r\nhello\r\n", "%1\r\n+a\r\n*2\r\n:1\r\n:2\r\n",
		"|1\r\n+a\r\n+b\r\n+OK\r\n", ">2\r\n+a\r\n$3\r\nabc\r\n",
	} {
		b := []byte(r)
		want, _, _, _ := resp.Scan(b)
		for cut := 1; cut < len(b); cut++ {
			var st resp.ScanState
			if n, _, _, err := resp.ScanFrom(b[:cut], &st); n != 0 || err != nil {
				t.Fatalf("%q cut at %d: %d, %v", r, cut, n, err)
			}
			for more := cut + 1; more <= len(b); more++ {
				n, _, _, err := resp.ScanFrom(b[:more], &st)
				if err != nil || (more < len(b) && n != 0) || (more == len(b) && n != want) {
					t.Fatalf("%q cut at %d, then %d bytes: %d, %v (want %d at the end)", r, cut, more, n, err, want)
				}
			}
		}
	}
}

// Issue 35, item 4: a bulk announced beyond MaxReply is refused at its
// header, not buffered until the limit; the server here sends a little of
// it and waits, so only the announcement can end the read.
func TestClientRefusesAnnouncedHugeBulk(t *testing.T) {
	head := []byte("$4294967295\r\nxxxx")
	srv := respscript.Start(t, respscript.Options{Script: respscript.OnNth("INFO", 1, respscript.Stream(head, nil, 0))})
	c, err := resp.Dial(context.Background(), resp.DialOptions{Addr: srv.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do(context.Background(), "INFO"); err == nil || !strings.Contains(err.Error(), "announced as 4294967310 bytes") {
		t.Fatalf("Do = %v, want the announced size refused", err)
	}
}
