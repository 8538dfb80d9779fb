package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"redline/internal/bench"
	"redline/internal/benchdata"
	"redline/internal/labdata"
	"redline/internal/redistest"
	"redline/internal/testutil"
	"redline/internal/testutil/respscript"
)

// TestBenchWorkersMerge runs one test in two worker processes (this test
// binary, as redline, through TestMain) and checks the merge: exactly -n
// requests on the server, two worker lines, and a merged histogram holding
// every request.
func TestBenchWorkersMerge(t *testing.T) {
	s := redistest.Start(t)
	t.Setenv("REDLINE_TEST_MAIN", "1")
	out := filepath.Join(t.TempDir(), "w.json")
	stdout, errOut, code := runCLI(t, context.Background(), nil, "bench", "--workers", "2", "-p", port(s), "-t", "set",
		"-c", "5", "-n", "3001", "-r", "1000", "-q", "--progress", "none", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	if got := commandCalls(t, s)["set"]; got != 3001 {
		t.Errorf("server saw %d SET calls, want 3001", got)
	}
	doc, err := benchdata.ReadDocument(out)
	if err != nil {
		t.Fatal(err)
	}
	sum := doc.Results[0]
	if sum.Requests != 3001 || sum.Histogram.TotalCount() != 3001 || len(sum.Workers) != 2 || sum.Config.Clients != 5 {
		t.Fatalf("merged %d requests (histogram %d), %d workers, %d clients", sum.Requests, sum.Histogram.TotalCount(), len(sum.Workers), sum.Config.Clients)
	}
	if sum.Workers[0].Requests+sum.Workers[1].Requests != 3001 || sum.Workers[0].Clients != 3 {
		t.Errorf("worker shares %+v", sum.Workers)
	}
	t.Log(stdout)
}

func TestBenchWorkersUsage(t *testing.T) {
	_, errOut, code := runCLI(t, context.Background(), nil, "bench", "--workers", "4", "-c", "2", "-t", "set")
	if code != 2 {
		t.Errorf("exit %d (%s), want 2 for fewer clients than workers", code, errOut)
	}
}

// TestBenchWorkersReadyBarrier: the first SELECT (one worker's first
// connection, --dbnum 1) is answered late, so that worker is ready long
// after the other; the barrier starts both together after it, where a
// fixed start would have let the quick one run alone.
func TestBenchWorkersReadyBarrier(t *testing.T) {
	testutil.Heavy(t)
	const slow = 2500 * time.Millisecond
	srv := respscript.Start(t, respscript.Options{Script: respscript.OnNth("SELECT", 1, respscript.Delay(slow))})
	t.Setenv("REDLINE_TEST_MAIN", "1")
	out := filepath.Join(t.TempDir(), "w.json")
	stdout, errOut, code := runCLI(t, context.Background(), nil, "bench", "--workers", "2", "-p", strconv.Itoa(srv.Port()), "--dbnum", "1",
		"-t", "set", "-c", "4", "-n", "400", "-q", "--progress", "none", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	doc, err := benchdata.ReadDocument(out)
	if err != nil {
		t.Fatal(err)
	}
	ws := doc.Results[0].Workers
	if len(ws) != 2 || ws[0].Clock == nil || ws[1].Clock == nil {
		t.Fatalf("workers %+v", ws)
	}
	apart := ws[0].Start.Sub(ws[1].Start).Abs()
	if apart > slow/2 {
		t.Errorf("the workers started %s apart; the slow one was %s late: no common start", apart, slow)
	}
	if srv.Count("SET") != 400 {
		t.Errorf("server saw %d SETs, want 400", srv.Count("SET"))
	}
	t.Logf("started %s apart\n%s", apart, stdout)
}

// TestBenchWorkersNeverReady: one worker's first SELECT is never
// answered; the run fails at the ready deadline naming that worker, and
// no worker process is left.
func TestBenchWorkersNeverReady(t *testing.T) {
	testutil.Heavy(t)
	srv := respscript.Start(t, respscript.Options{Script: respscript.OnNth("SELECT", 1, respscript.Stall())})
	t.Setenv("REDLINE_TEST_MAIN", "1")
	stdout, errOut, code := runCLI(t, context.Background(), nil, "bench", "--workers", "2", "-p", strconv.Itoa(srv.Port()), "--dbnum", "1",
		"-t", "set", "-c", "4", "-n", "400", "--timeout", "60s", "--workers-ready-timeout", "1s", "-q", "--progress", "none")
	if code != 1 || !regexp.MustCompile(`worker [12] not ready within 1s`).MatchString(errOut) {
		t.Fatalf("exit %d, want 1 and the worker named\n%s\n%s", code, stdout, errOut)
	}
	if n := srv.Count("SET"); n != 0 {
		t.Errorf("%d SETs were sent: the ready worker started alone", n)
	}
	if left := childWorkers(t); len(left) > 0 {
		t.Errorf("worker processes left running: %v", left)
	}
	t.Log(errOut)
}

// childWorkers lists this process's children that are worker sessions.
func childWorkers(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pid := range childrenOf(os.Getpid()) {
		if cmd, _ := os.ReadFile("/proc/" + pid + "/cmdline"); strings.Contains(string(cmd), "session\x00--worker") {
			out = append(out, pid)
		}
	}
	return out
}

// TestLabWorkersLoad: a lab whose client.workers is 2 measures every run
// from two worker processes: exact totals, a line per worker in each
// run's summary, the per-second series merged from the workers' ticks,
// and the load described in the report.
func TestLabWorkersLoad(t *testing.T) {
	testutil.Heavy(t)
	t.Setenv("REDLINE_TEST_MAIN", "1")
	dir := t.TempDir()
	scenario := filepath.Join(dir, "s.yaml")
	os.WriteFile(scenario, []byte(`
name: workers
client: {workers: 2}
workloads: [{name: set, bench: "-t set -c 4 -n 2000 -r 1000"}, {name: timed, bench: "-t set -c 2 --duration 2500ms"}]
variants:
  - {name: baseline, baseline: true}
  - {name: hz, server: {config: ["hz 20"]}}
repetitions: 1
doctor: false
`), 0o644)
	out := filepath.Join(dir, "out")
	stdout, errOut, code := runCLI(t, context.Background(), nil, "lab", scenario, "--out", out, "--state-dir", filepath.Join(dir, "state"), "--progress", "none")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	res, err := labdata.ReadResult(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Scenario.Client.Workers != 2 || len(res.Runs) != 4 {
		t.Fatalf("scenario client %+v, %d runs", res.Scenario.Client, len(res.Runs))
	}
	for _, r := range res.Runs {
		if r.Workload == "timed" {
			if len(r.Series) < 2 || r.Series[0].RPS <= 0 || len(r.Summary.Workers) != 2 {
				t.Errorf("run %d: series %+v from %d workers", r.Seq, r.Series, len(r.Summary.Workers))
			}
			continue
		}
		if s := r.Summary; s.Requests != 2000 || len(s.Workers) != 2 || s.Workers[0].Requests+s.Workers[1].Requests != 2000 {
			t.Errorf("run %d: %d requests, workers %+v", r.Seq, s.Requests, s.Workers)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil || !strings.Contains(string(md), "2 local worker processes") {
		t.Errorf("the report does not describe the load (%v)", err)
	}
}

// TestBenchWorkersSignals: SIGTERM to the coordinator (not its group)
// stops the workers, which report what they measured: partial results
// kept, a line per worker, exit 128+15, well within bench.StopWait.
// kill -9 of the coordinator stops them too (their sessions' input
// ends): nothing is left running. The coordinator is
// started with SIGINT ignored, as `cmd &` in a script does, so its
// workers inherit that and a SIGINT would not stop them. A terminal's
// Ctrl-C (SIGINT to the coordinator's process group) reaches only the
// coordinator, the worker sessions being in groups of their own: both
// workers' figures are in the partial result (a session killed by the
// SIGINT would have lost its worker's).
func TestBenchWorkersSignals(t *testing.T) {
	s := redistest.Start(t)
	for _, tc := range []struct {
		sig   syscall.Signal
		group bool   // to the coordinator's process group, as a terminal does
		named string // how the summary names it
	}{{syscall.SIGTERM, false, "SIGTERM"}, {syscall.SIGKILL, false, ""}, {syscall.SIGINT, true, "Ctrl-C"}} {
		sig := tc.sig
		t.Run(sig.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "w.json")
			trap := `trap "" INT; `
			if tc.group {
				trap = ""
			}
			cmd := exec.Command("bash", "-c", trap+`exec "$0" "$@"`, os.Args[0], "bench", "--workers", "2", "-p", port(s), "-t", "set", "-c", "4", "-n", "0", "--duration", "1h",
				"-q", "--progress", "none", "-o", out)
			cmd.Env = append(os.Environ(), "REDLINE_TEST_MAIN=1")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := testutil.StartSignallable(cmd); err != nil {
				t.Fatal(err)
			}
			before := commandCalls(t, s)["set"]
			waitFor(t, "the workers' load", func() bool { return commandCalls(t, s)["set"] > before+100 })
			// The worker sessions run in process groups of their own (a
			// terminal's Ctrl-C reaches only the coordinator): they are
			// found as its children.
			workers := childrenOf(cmd.Process.Pid)
			if len(workers) != 2 {
				t.Fatalf("the coordinator has children %v, want its 2 worker sessions", workers)
			}
			sent := time.Now()
			if tc.group {
				syscall.Kill(-cmd.Process.Pid, sig)
			} else {
				cmd.Process.Signal(sig)
			}
			err := cmd.Wait()
			waitFor(t, "every worker to exit", func() bool { return len(alive(workers)) == 0 })
			if took := time.Since(sent); took > bench.StopWait/2 {
				t.Errorf("the workers took %s to stop: they were not told, only killed at the deadline", took)
			}
			if sig == syscall.SIGKILL {
				return
			}
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 128+int(sig) {
				t.Fatalf("exit %v, want %d\n%s", err, 128+int(sig), stderr.String())
			}
			if !strings.Contains(stderr.String(), "measured before "+tc.named) {
				t.Errorf("the summary does not name the signal:\n%s", stderr.String())
			}
			doc, rerr := benchdata.ReadDocument(out)
			if rerr != nil {
				t.Fatal(rerr)
			}
			sum := doc.Results[0]
			if !sum.Interrupted || len(sum.Workers) != 2 || sum.WorkersFailed != 0 || sum.Requests == 0 || sum.Histogram.TotalCount() != sum.Requests {
				t.Errorf("partial result: interrupted %v, %d workers (%d failed: %s), %d requests", sum.Interrupted, len(sum.Workers), sum.WorkersFailed, sum.Error, sum.Requests)
			}
		})
	}
}

// childrenOf lists the live children of process pid.
func childrenOf(pid int) []string {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []string
	for _, d := range dirs {
		if f := procStat(filepath.Base(d)); len(f) > 1 && f[1] == strconv.Itoa(pid) && f[0] != "Z" {
			out = append(out, filepath.Base(d))
		}
	}
	return out
}

// alive lists those of pids that still run (not gone, not zombies).
func alive(pids []string) []string {
	var out []string
	for _, p := range pids {
		if f := procStat(p); len(f) > 0 && f[0] != "Z" {
			out = append(out, p)
		}
	}
	return out
}

// procStat is the fields of /proc/PID/stat after the command name
// (state, ppid, pgrp, ...), nil when the process is gone.
func procStat(pid string) []string {
	st, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return nil
	}
	return strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))
}

// TestBenchWorkersPassword: the password reaches each worker on its
// stdin (the workers authenticate), and appears in no output.
func TestBenchWorkersPassword(t *testing.T) {
	const pw = "w0rkers-s3cret"
	s := redistest.Start(t, "requirepass "+pw)
	t.Setenv("REDLINE_TEST_MAIN", "1")
	dir := t.TempDir()
	pass, out := filepath.Join(dir, "pw"), filepath.Join(dir, "w.json")
	os.WriteFile(pass, []byte(pw+"\n"), 0o600)
	stdout, errOut, code := runCLI(t, context.Background(), nil, "bench", "--workers", "2", "--pass-file", pass, "-p", port(s),
		"-t", "set", "-c", "2", "-n", "200", "-q", "--progress", "none", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	saved, _ := os.ReadFile(out)
	if strings.Contains(stdout+errOut+string(saved), pw) {
		t.Errorf("the password appears in the output or the -o file")
	}
}

// TestBenchWorkersOneKilled: one worker is killed (-9) in the middle of a
// timed run; the other finishes. The merged result says it is partial:
// the killed worker's error in `error`, workers_failed 1, the asked-for
// clients in the configuration, exit 1.
func TestBenchWorkersOneKilled(t *testing.T) {
	s := redistest.Start(t)
	t.Setenv("REDLINE_TEST_MAIN", "1")
	out := filepath.Join(t.TempDir(), "w.json")
	done := make(chan struct{})
	var killed string
	go func() {
		defer close(done)
		before := commandCalls(t, s)["set"]
		waitFor(t, "the workers' load", func() bool { return commandCalls(t, s)["set"] > before+100 })
		if ws := childWorkers(t); len(ws) == 2 {
			killed = ws[1]
			pid, _ := strconv.Atoi(killed)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	stdout, errOut, code := runCLI(t, context.Background(), nil, "bench", "--workers", "2", "-p", port(s), "-t", "set",
		"-c", "4", "-n", "0", "--duration", "3s", "-q", "--progress", "none", "-o", out)
	<-done
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, errOut)
	}
	doc, err := benchdata.ReadDocument(out)
	if err != nil {
		t.Fatal(err)
	}
	sum := doc.Results[0]
	if sum.WorkersFailed != 1 || sum.Config.Clients != 4 || !strings.Contains(sum.Error, "worker ") || sum.Requests == 0 {
		t.Errorf("merged: %d failed, %d clients, error %q, %d requests", sum.WorkersFailed, sum.Config.Clients, sum.Error, sum.Requests)
	}
	// The killed process's worker, under its own number, says how it
	// ended; the other keeps its figures.
	if killed == "" {
		t.Fatal("the two worker sessions were not found")
	}
	for _, w := range sum.Workers {
		dead := strings.Contains(w.Error, "process "+killed+" was killed")
		if dead == (w.Requests > 0) || !strings.Contains(errOut, bench.WorkerName(w.Worker, "")+": ") == dead {
			t.Errorf("worker %d: %d requests, error %q; killed pid %s\n%s", w.Worker, w.Requests, w.Error, killed, errOut)
		}
	}
	t.Log(errOut)
}

// TestWorkerPoolReopens: a worker session killed after one run (a lab
// keeps its sessions from run to run) is started again for the next, so
// the next run has all its workers, under the same numbers. Before, a
// lab's local workers were new processes for every run: a killed one
// failed only its own run, and that stays so.
func TestWorkerPoolReopens(t *testing.T) {
	s := redistest.Start(t)
	t.Setenv("REDLINE_TEST_MAIN", "1")
	ctx := context.Background()
	pool, err := localWorkers(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.close()
	o := bench.DefaultOptions()
	o.Addr, o.Clients, o.Requests = s.Addr(), 2, 100
	test := bench.Test{Title: "SET", Args: []string{"SET", "k", "v"}}
	wo := bench.WorkersOptions{ReadyTimeout: time.Minute}
	if _, err := pool.run(ctx, o, test, nil, wo); err != nil {
		t.Fatal(err)
	}
	ws := childWorkers(t)
	if len(ws) != 2 {
		t.Fatalf("worker sessions %v, want 2", ws)
	}
	pid, _ := strconv.Atoi(ws[0])
	syscall.Kill(pid, syscall.SIGKILL)
	waitFor(t, "the killed session's end", func() bool { return oneEnded(pool) })
	m, err := pool.run(ctx, o, test, nil, wo)
	if err != nil || m.Requests != 100 || len(m.Workers) != 2 || m.WorkersFailed != 0 {
		t.Fatalf("the run after a worker session was killed: %v, %+v", err, m)
	}
}

// TestWorkerStalledInRequestsRun: a worker session stopped (SIGSTOP) in
// a run of -n requests, which has no result deadline, is taken for dead
// once it has said nothing (not even a heartbeat's reply) for its dead
// time: killed, its worker failed under its number, the other's figures
// merged. Before, the run waited for it for ever.
func TestWorkerStalledInRequestsRun(t *testing.T) {
	s := redistest.Start(t)
	t.Setenv("REDLINE_TEST_MAIN", "1")
	defer func(hb time.Duration) { localWorkerHeartbeat = hb }(localWorkerHeartbeat)
	localWorkerHeartbeat = 5 * time.Second // a loaded machine's -race run may miss a heartbeat of 1 s
	ctx := context.Background()
	pool, err := localWorkers(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.close()
	ws := childWorkers(t)
	if len(ws) != 2 {
		t.Fatalf("worker sessions %v, want 2", ws)
	}
	o := bench.DefaultOptions()
	o.Addr, o.Clients, o.Requests = s.Addr(), 2, 1<<40
	go func() {
		before := commandCalls(t, s)["set"]
		waitFor(t, "the workers' load", func() bool { return commandCalls(t, s)["set"] > before+100 })
		pid, _ := strconv.Atoi(ws[0])
		syscall.Kill(pid, syscall.SIGSTOP)
		// The other worker's share never ends either: once the stopped
		// one is failed, Ctrl-C ends the run as a user would.
	}()
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	var m *benchdata.Summary
	go func() {
		defer close(done)
		m, err = pool.run(rctx, o, bench.Test{Title: "SET", Args: []string{"SET", "k", "v"}}, nil, bench.WorkersOptions{ReadyTimeout: time.Minute})
	}()
	waitFor(t, "the stopped session's end", func() bool { return oneEnded(pool) })
	cancel()
	<-done
	if m == nil || m.WorkersFailed != 1 || m.Requests == 0 || !strings.Contains(m.Error, "nothing from it") {
		t.Fatalf("merged %+v, %v", m, err)
	}
	if got := alive(ws[:1]); len(got) != 0 {
		t.Errorf("the stopped worker session %v is still there", got)
	}
	t.Log(m.Error)
}

// oneEnded reports whether a session of pool has ended.
func oneEnded(pool *workerPool) bool {
	for _, c := range pool.clients {
		select {
		case <-c.Done():
			return true
		default:
		}
	}
	return false
}
