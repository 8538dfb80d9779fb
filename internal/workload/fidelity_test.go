package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"redline/internal/bench"
	"redline/internal/redisadmin"
	"redline/internal/redisserver"
	"redline/internal/redistest"
	"redline/internal/resp"
)

// driverScript is the source's Lua script: EVALSHA runs it, and its GET
// is counted under GET as Redis counts a script's commands.
const driverScript = "return redis.call('GET', KEYS[1])"

// driveSource loads a known data set into s and returns a function that
// sends a known mix until stop closes: strings (30% with a TTL), hashes,
// sorted sets, lists and counters; pipelines of 10 commands; EVALSHA of a
// script; MULTI/EXEC. This traffic comes from this driver, not from a
// workload file.
func driveSource(t *testing.T, s *redisserver.Server) func(stop <-chan struct{}) error {
	t.Helper()
	c := redistest.Client(t, s)
	r := rand.New(rand.NewPCG(7, 7))
	val := func(lo, hi int) string {
		b := make([]byte, lo+r.IntN(hi-lo+1))
		for i := range b {
			b[i] = byte('a' + r.IntN(26))
		}
		return string(b)
	}
	var out []byte
	flush := func() {
		if _, err := c.Conn().Write(out); err != nil {
			t.Fatal(err)
		}
		out = out[:0]
	}
	// One pipelined load; drainConn reads its replies.
	send := func(args ...string) { out = resp.AppendCommand(out, args...) }
	for i := range 3000 {
		send("SET", fmt.Sprintf("user:%d:name", i), val(20, 200))
		if i%10 < 3 {
			send("EXPIRE", fmt.Sprintf("user:%d:name", i), strconv.Itoa(3600+r.IntN(3600)))
		}
	}
	for i := range 1000 {
		args := []string{"HSET", fmt.Sprintf("profile:%d", i)}
		for f := range 5 + r.IntN(26) {
			args = append(args, fmt.Sprintf("field%d", f), val(10, 100))
		}
		send(args...)
	}
	for i := range 500 {
		args := []string{"ZADD", fmt.Sprintf("board:%d", i)}
		for m := range 50 + r.IntN(151) {
			args = append(args, strconv.Itoa(r.IntN(100000)), fmt.Sprintf("player:%d", m))
		}
		send(args...)
	}
	for i := range 1000 {
		args := []string{"RPUSH", fmt.Sprintf("queue:%d", i)}
		for range 10 + r.IntN(91) {
			args = append(args, val(50, 500))
		}
		send(args...)
	}
	for i := range 200 {
		send("SET", fmt.Sprintf("counter:%d", i), strconv.Itoa(r.IntN(1000)))
	}
	flush()
	drainConn(t, c)
	sha := redistest.Do(t, c, "SCRIPT", "LOAD", driverScript).Str
	return func(stop <-chan struct{}) error {
		ctx := context.Background()
		d, err := s.Client(ctx)
		if err != nil {
			return err
		}
		defer d.Close()
		r := rand.New(rand.NewPCG(9, 9))
		var buf []byte
		for {
			select {
			case <-stop:
				return nil
			default:
			}
			buf = buf[:0]
			cmds := 0
			for range 10 {
				buf = resp.AppendCommand(buf, mixCommand(r, sha, val)...)
				cmds++
			}
			if r.IntN(20) == 0 {
				buf = resp.AppendCommand(buf, "MULTI")
				buf = resp.AppendCommand(buf, "INCR", fmt.Sprintf("counter:%d", r.IntN(200)))
				buf = resp.AppendCommand(buf, "EXEC")
				cmds += 3
			}
			if _, err := d.Conn().Write(buf); err != nil {
				return err
			}
			if err := readReplies(d, cmds); err != nil {
				return err
			}
			time.Sleep(200 * time.Microsecond) // a steady, modest load
		}
	}
}

// mixCommand draws one command of the driver's known mix.
func mixCommand(r *rand.Rand, sha string, val func(int, int) string) []string {
	x := r.IntN(100)
	switch {
	case x < 30:
		return []string{"GET", fmt.Sprintf("user:%d:name", r.IntN(3000))}
	case x < 40:
		return []string{"SET", fmt.Sprintf("user:%d:name", r.IntN(3000)), val(20, 200), "EX", "3600"}
	case x < 55:
		return []string{"HGET", fmt.Sprintf("profile:%d", r.IntN(1000)), fmt.Sprintf("field%d", r.IntN(5))}
	case x < 60:
		return []string{"HSET", fmt.Sprintf("profile:%d", r.IntN(1000)), fmt.Sprintf("field%d", r.IntN(5)), val(10, 100)}
	case x < 65:
		return []string{"ZADD", fmt.Sprintf("board:%d", r.IntN(500)), strconv.Itoa(r.IntN(100000)), fmt.Sprintf("player:%d", r.IntN(50))}
	case x < 75:
		return []string{"ZRANGE", fmt.Sprintf("board:%d", r.IntN(500)), "0", "9"}
	case x < 80:
		return []string{"LPUSH", fmt.Sprintf("queue:%d", r.IntN(1000)), val(50, 500)}
	case x < 85:
		return []string{"RPOP", fmt.Sprintf("queue:%d", r.IntN(1000))}
	case x < 95:
		return []string{"INCR", fmt.Sprintf("counter:%d", r.IntN(200))}
	}
	return []string{"EVALSHA", sha, "1", fmt.Sprintf("user:%d:name", r.IntN(3000))}
}

// readReplies reads n replies from c's connection.
func readReplies(c *resp.Client, n int) error {
	buf := make([]byte, 0, 64<<10)
	tmp := make([]byte, 64<<10)
	for n > 0 {
		c.Conn().SetReadDeadline(time.Now().Add(10 * time.Second))
		k, err := c.Conn().Read(tmp)
		if err != nil {
			return err
		}
		buf = append(buf, tmp[:k]...)
		for n > 0 {
			size, _, _, err := resp.Scan(buf)
			if err != nil {
				return err
			}
			if size == 0 {
				break
			}
			buf = buf[size:]
			n--
		}
	}
	return nil
}

// drainConn waits until every pipelined reply on c has come: it counts
// replies until one marks the end.
func drainConn(t *testing.T, c *resp.Client) {
	t.Helper()
	if _, err := c.Conn().Write(resp.AppendCommand(nil, "ECHO", "redline-drain-mark")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 1<<20)
	tmp := make([]byte, 1<<16)
	for {
		c.Conn().SetReadDeadline(time.Now().Add(30 * time.Second))
		k, err := c.Conn().Read(tmp)
		if err != nil {
			t.Fatal(err)
		}
		buf = append(buf, tmp[:k]...)
		for {
			v, size, err := resp.Parse(buf)
			if err != nil || size == 0 {
				break
			}
			buf = buf[size:]
			if v.Str == "redline-drain-mark" {
				return
			}
		}
	}
}

// TestCaptureReplayFidelity is issue 38's acceptance: a source driven by
// a known mix (driveSource, not a workload file) is captured and the
// capture replayed on a fresh server; each command's share is within 5
// points, each type's median and p90 element counts and sizes, the key
// count and used memory within 10%.
func TestCaptureReplayFidelity(t *testing.T) {
	src := redistest.Start(t, "save \"\"", "appendonly no")
	drive := driveSource(t, src)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var driveErr error
	wg.Add(1)
	go func() { defer wg.Done(); driveErr = drive(stop) }()
	ctx := context.Background()
	c, err := redisadmin.Dial(ctx, redisadmin.Options{Addr: src.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f, err := Capture(ctx, c, CaptureOptions{Duration: 3 * time.Second, Sample: 6000}) // no probe-rate bound: a test server
	close(stop)
	wg.Wait()
	if err != nil || driveErr != nil {
		t.Fatalf("capture: %v; driver: %v", err, driveErr)
	}
	b, _ := Marshal(f)
	if _, err := Parse(b); err != nil {
		t.Fatalf("the captured file does not parse back: %v\n%s", err, b)
	}
	if dir := os.Getenv("REDLINE_WORKLOAD_KEEP"); dir != "" {
		os.WriteFile(dir+"/captured.yaml", b, 0o644)
	}
	scratch := redistest.Start(t, "save \"\"", "appendonly no")
	o := bench.DefaultOptions()
	o.Addr = scratch.Addr()
	rep, err := Replay(ctx, o, f, 3*time.Second, 6000)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	for _, d := range Compare(f.Source, rep) {
		t.Logf("%-28s source %10.4g replay %10.4g  %+6.1f %s", d.What, d.Source, d.Replay, d.Delta, d.Unit)
		if !d.OK {
			t.Errorf("%s: source %.4g, replay %.4g (%+.1f %s): outside the limit", d.What, d.Source, d.Replay, d.Delta, d.Unit)
		}
	}
}
