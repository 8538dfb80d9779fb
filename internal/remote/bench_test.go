package remote_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"redline/internal/bench"
	"redline/internal/redistest"
	"redline/internal/remote"
	"redline/internal/testutil"
)

// benchSpecs are two workers' shares of -c 4 -n n SET against addr.
func benchSpecs(t *testing.T, addr string, n int64, d time.Duration) []bench.WorkerSpec {
	t.Helper()
	o := bench.DefaultOptions()
	o.Addr, o.Clients, o.Requests, o.Duration = addr, 4, n, d
	test := bench.Test{Title: "SET", Args: []string{"SET", "key:__rand_int__", "__data__"}}
	return bench.WorkerSpecs(o, test, []byte("xxx"), 2, false)
}

// TestSessionBenchWorkers: two sessions each run a share through the
// ready barrier; the server sees exactly -n requests, and each worker's
// line keeps its host.
func TestSessionBenchWorkers(t *testing.T) {
	testutil.Heavy(t)
	srv := redistest.Start(t)
	addr := net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port))
	ctx := context.Background()
	var ws []bench.WorkerSlot
	for i, spec := range benchSpecs(t, addr, 1001, 0) {
		c, in, _ := pipeSession(t, t.TempDir(), t.TempDir())
		defer in.Close()
		if err := c.Handshake(ctx, "test", 0, 0); err != nil {
			t.Fatal(err)
		}
		w, err := remote.NewBenchWorker(c, "h"+strconv.Itoa(i+1), spec)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, bench.WorkerSlot{N: i + 1, Host: "h" + strconv.Itoa(i+1), Worker: w})
	}
	m, err := bench.RunWorkers(ctx, ws, bench.WorkersOptions{ReadyTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if m.Requests != 1001 || m.Histogram.TotalCount() != 1001 || len(m.Workers) != 2 || m.Workers[1].Host != "h2" || m.Workers[1].Clock == nil {
		t.Fatalf("merged %d requests, workers %+v", m.Requests, m.Workers)
	}
}

// TestSessionBenchLinkLost: the client's link ends during an endless
// run (--duration 1h): the session's dead man's switch stops the worker
// by itself (its cleanup counts it) and the session ends.
func TestSessionBenchLinkLost(t *testing.T) {
	testutil.Heavy(t)
	srv := redistest.Start(t)
	addr := net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port))
	ctx := context.Background()
	c, in, done := pipeSession(t, t.TempDir(), t.TempDir())
	if err := c.Handshake(ctx, "test", 0, 0); err != nil {
		t.Fatal(err)
	}
	spec := benchSpecs(t, addr, 0, time.Hour)[0]
	w, err := remote.NewBenchWorker(c, "h1", spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx, 0); err != nil {
		t.Fatal(err)
	}
	in.Close() // the link
	cl := <-done
	if cl.Benches != 1 || !strings.Contains(cl.Reason, "input closed") {
		t.Fatalf("cleanup %+v, want the worker stopped by the session", cl)
	}
}
