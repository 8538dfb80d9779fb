package serverhost_test

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"redline/internal/bench"
	"redline/internal/redisserver"
	"redline/internal/redistest"
	"redline/internal/remote"
	"redline/internal/serverhost"
	"redline/internal/testutil"
	"redline/internal/testutil/respscript"
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
		w, err := serverhost.NewBenchWorker(c, "h"+strconv.Itoa(i+1), spec)
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
	w, err := serverhost.NewBenchWorker(c, "h1", spec)
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

// TestBenchWorkerStopBeforeReady: a worker whose clients cannot connect
// (the server never answers its SELECT) is stopped by Stop before it is
// ready: the session stops it and prepare answers with why, long before
// the ready wait's own deadline. (The session named a worker only in
// prepare's reply, so a stop could not reach one still connecting: it
// ran on until its session ended.)
func TestBenchWorkerStopBeforeReady(t *testing.T) {
	srv := respscript.Start(t, respscript.Options{Script: respscript.OnNth("SELECT", 1, respscript.Stall())})
	c, in, done := pipeSession(t, t.TempDir(), t.TempDir())
	ctx := context.Background()
	if err := c.Handshake(ctx, "test", 0, 0); err != nil {
		t.Fatal(err)
	}
	spec := benchSpecs(t, srv.Addr(), 100, 0)[0]
	spec.Options.DB, spec.Options.Timeout = 1, time.Hour
	w, err := serverhost.NewBenchWorker(c, "h1", spec)
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, time.Hour)
	defer cancel()
	ready := make(chan error, 1)
	go func() { ready <- w.Ready(rctx) }()
	<-srv.Seen("SELECT", 1)
	w.Stop()
	if err := <-ready; err == nil || rctx.Err() != nil {
		t.Fatalf("ready: %v (the wait's context: %v), want the stopped worker's error", err, rctx.Err())
	}
	if _, _, err := w.Result(ctx); err == nil {
		t.Error("a worker never ready has a result")
	}
	in.Close()
	if cl := <-done; cl.Benches != 0 {
		t.Errorf("the session's cleanup stopped %d bench(es): the stopped worker was still running", cl.Benches)
	}
}

// TestWorkerSession: a local worker session (ServeWorker) takes
// no other session's cleanup report, runs a unix-socket share, which a
// remote session refuses, and refuses every operation but a worker's.
func TestWorkerSession(t *testing.T) {
	testutil.Heavy(t)
	// The server's own socket: as root it runs as an unprivileged user,
	// who cannot create one in t.TempDir.
	sock := redistest.StartWith(t, redisserver.Options{Unix: true}).Socket
	state := t.TempDir()
	report := filepath.Join(state, "remote", "cleanup-x.json")
	os.MkdirAll(filepath.Dir(report), 0o700)
	os.WriteFile(report, []byte(`{"session":"x","reason":"input closed"}`), 0o600)
	t.Chdir(state) // a worker session has no state directory: not even a relative one

	spec := benchSpecs(t, "", 200, 0)[0]
	spec.Options.Network, spec.Options.Addr = "unix", sock
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan *remote.Cleanup, 1)
	go func() {
		done <- serverhost.ServeWorker(context.Background(), inR, outW, "test")
		outW.Close()
	}()
	c := remote.NewClient(outR, inW, nil)
	ctx := context.Background()
	if err := c.Handshake(ctx, "test", 0, 0); err != nil {
		t.Fatal(err)
	}
	if len(c.Hello.Cleanups) != 0 {
		t.Errorf("the worker session took cleanup reports: %+v", c.Hello.Cleanups)
	}
	if err := c.Call(ctx, serverhost.OpSnapshot, serverhost.SnapshotArgs{}, nil); err == nil || !strings.Contains(err.Error(), "unknown operation") {
		t.Errorf("snapshot in a worker session: %v", err)
	}
	w, err := serverhost.NewBenchWorker(c, "", spec)
	if err != nil {
		t.Fatal(err)
	}
	m, err := bench.RunWorkers(ctx, []bench.WorkerSlot{{N: 1, Worker: w}}, bench.WorkersOptions{ReadyTimeout: time.Minute})
	if err != nil || m.Requests != 100 {
		t.Fatalf("unix-socket share in a worker session: %v, %+v", err, m)
	}
	inW.Close()
	<-done
	if _, err := os.Stat(report); err != nil {
		t.Errorf("another session's cleanup report is gone: %v", err)
	}
}
