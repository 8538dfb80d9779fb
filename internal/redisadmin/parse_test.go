package redisadmin

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"redline/internal/resp"
)

func bulk(s string) resp.Value { return resp.Value{Type: '$', Str: s} }

func TestParseConfigReply(t *testing.T) {
	for _, typ := range []byte{'*', '%'} { // RESP2 array, RESP3 map
		v := resp.Value{Type: typ, Elems: []resp.Value{bulk("maxmemory"), bulk("0"), bulk("Save"), bulk("3600 1 300 100"), bulk("appendonly"), bulk("no")}}
		c, err := parseConfigReply(v)
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := c.Int("maxmemory"); !ok || n != 0 {
			t.Errorf("maxmemory = %d, %v", n, ok)
		}
		if d := cmp.Diff([]SavePoint{{3600, 1}, {300, 100}}, c.SavePoints()); d != "" {
			t.Errorf("SavePoints (-want +got):\n%s", d)
		}
		if aof, ok := c.Bool("appendonly"); !ok || aof {
			t.Errorf("appendonly = %v, %v", aof, ok)
		}
		if !c.Persistent() {
			t.Error("save points set but Persistent is false")
		}
	}
	if _, err := parseConfigReply(resp.Value{Type: '*', Elems: []resp.Value{bulk("x")}}); err == nil {
		t.Error("odd element count accepted")
	}
	if _, err := parseConfigReply(resp.Value{Type: '-', Str: "ERR unknown command 'CONFIG'"}); err == nil {
		t.Error("error reply accepted")
	}
	if (Config{"save": "", "appendonly": "no"}).Persistent() {
		t.Error("no save points and no AOF but Persistent is true")
	}
}

func TestParseLatencyLatest(t *testing.T) {
	row := func(f ...string) resp.Value {
		v := resp.Value{Type: '*'}
		for _, s := range f {
			v.Elems = append(v.Elems, bulk(s))
		}
		return v
	}
	v := resp.Value{Type: '*', Elems: []resp.Value{row("command", "1700000000", "250", "1000"), row("fork", "1700000001", "3", "7", "42", "9")}}
	got, err := parseLatencyLatest(v)
	if err != nil {
		t.Fatal(err)
	}
	want := []LatencyEvent{
		{Event: "command", Time: time.Unix(1700000000, 0).UTC(), Latest: 250 * time.Millisecond, Max: time.Second},
		{Event: "fork", Time: time.Unix(1700000001, 0).UTC(), Latest: 3 * time.Millisecond, Max: 7 * time.Millisecond},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if _, err := parseLatencyLatest(resp.Value{Type: '*', Elems: []resp.Value{row("x", "1", "2")}}); err == nil {
		t.Error("short row accepted")
	}
	if _, err := parseLatencyLatest(resp.Value{Type: '*', Elems: []resp.Value{row("x", "1", "two", "3")}}); err == nil || !strings.Contains(err.Error(), "x") {
		t.Errorf("bad number: err = %v, want an error naming the event", err)
	}
}

func TestParseStatStart(t *testing.T) {
	fields := " S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 424242 20 21"
	tests := []struct {
		in    string
		comm  string
		ticks int64
		ok    bool
	}{
		{"9726 (redis-server)" + fields, "redis-server", 424242, true},
		{"9726 (we ird) (x))" + fields, "we ird) (x)", 424242, true},
		{"9726 redis-server" + fields, "", 0, false},
		{"9726 (redis-server) S 1 2", "", 0, false},
	}
	for _, tt := range tests {
		comm, ticks, err := parseStatStart(tt.in)
		if (err == nil) != tt.ok || comm != tt.comm || ticks != tt.ticks {
			t.Errorf("parseStatStart(%q) = %q, %d, %v; want %q, %d, ok=%v", tt.in, comm, ticks, err, tt.comm, tt.ticks, tt.ok)
		}
	}
}

func TestParseLogWarnings(t *testing.T) {
	log := strings.Join([]string{
		"41:C 01 Jan 2026 00:00:00.000 # oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo",
		"41:M 01 Jan 2026 00:00:00.001 # WARNING: old run",
		"77:C 01 Jan 2026 00:01:00.000 # oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo",
		"77:M 01 Jan 2026 00:01:00.001 # You requested maxclients of 10000 requiring at least 10032 max file descriptors.",
		"77:M 01 Jan 2026 00:01:00.001 # Current maximum open files is 256. maxclients has been reduced to 224 to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.",
		"77:M 01 Jan 2026 00:01:00.002 * Ready to accept connections",
		"77:M 01 Jan 2026 00:01:00.002 # WARNING: The TCP backlog setting of 511 cannot be enforced because /proc/sys/net/core/somaxconn is set to the lower value of 128.",
		"77:M 01 Jan 2026 00:01:00.003 # Server initialized",
		"88:M 01 Jan 2026 00:01:00.003 # WARNING: another server's line",
	}, "\r\n")
	want := []string{
		"You requested maxclients of 10000 requiring at least 10032 max file descriptors.",
		"Current maximum open files is 256. maxclients has been reduced to 224 to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.",
		"WARNING: The TCP backlog setting of 511 cannot be enforced because /proc/sys/net/core/somaxconn is set to the lower value of 128.",
	}
	if d := cmp.Diff(want, parseLogWarnings(log, 77)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestParseConfFile(t *testing.T) {
	got := parseConfFile(strings.NewReader("# comment\nMaxclients 100\n\nsave 60 1\nmaxclients 10000\n  bind 127.0.0.1 ::1\n"))
	want := map[string]string{"maxclients": "10000", "save": "60 1", "bind": "127.0.0.1 ::1"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
