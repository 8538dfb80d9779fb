package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"redline/internal/benchdata"
	"redline/internal/redisserver"
	"redline/internal/redistest"
	"redline/internal/testutil"
	"redline/internal/testutil/sshtest"
)

// sshBench is bench --workers ssh:srv,srv from the client namespace of an
// sshtest pair, against a real redis-server in the client namespace that
// the workers on the "server host" reach over the veth: this test binary
// is the coordinator (REDLINE_TEST_MAIN) and, pushed there, the sessions.
type sshBench struct {
	h   *sshtest.Hosts
	srv *redisserver.Server
	dir string
}

func newSSHBench(t *testing.T) *sshBench {
	t.Helper()
	testutil.Need(t, "redis-server")
	h := sshtest.New(t, sshtest.Options{SetEnv: []string{"HOME=" + t.TempDir(), "REDLINE_TEST_MAIN=1"}})
	srv := redistest.StartWith(t, redisserver.Options{NetNS: h.Pair.Client, Bind: h.Pair.ClientIP})
	return &sshBench{h: h, srv: srv, dir: t.TempDir()}
}

func (b *sshBench) command(t *testing.T, ctx context.Context, args ...string) *exec.Cmd {
	t.Helper()
	argv := append([]string{"netns", "exec", b.h.Pair.Client, os.Args[0], "bench", "--workers", "ssh:srv,srv",
		"--ssh-config", b.h.Config(t, "user", "host"), "--state-dir", filepath.Join(b.dir, "state"),
		"-h", b.h.Pair.ClientIP, "-p", strconv.Itoa(b.srv.Port), "--progress", "none"}, args...)
	cmd := exec.CommandContext(ctx, "ip", argv...)
	cmd.Env = append(os.Environ(), "REDLINE_TEST_MAIN=1")
	return cmd
}

// sessionsLeft lists the redline sessions still running on the server host.
func (b *sshBench) sessionsLeft(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "pids", b.h.Pair.Server).Output()
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, pid := range strings.Fields(string(out)) {
		if cmd, _ := os.ReadFile("/proc/" + pid + "/cmdline"); strings.Contains(string(cmd), "session") && !strings.Contains(string(cmd), "sshd") {
			left = append(left, pid+": "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	return left
}

// TestBenchSSHWorkers: two workers on the ssh host share -c 4 -n 2001;
// the server counts exactly 2001 SETs (INFO commandstats), the result has
// a line per worker with its host and clock, and nothing is left there.
func TestBenchSSHWorkers(t *testing.T) {
	b := newSSHBench(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := filepath.Join(b.dir, "w.json")
	cmd := b.command(t, ctx, "-t", "set", "-c", "4", "-n", "2001", "-r", "1000", "-o", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("bench: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if got := commandCalls(t, b.srv)["set"]; got != 2001 {
		t.Errorf("server saw %d SET calls, want 2001", got)
	}
	doc, err := benchdata.ReadDocument(out)
	if err != nil {
		t.Fatal(err)
	}
	sum := doc.Results[0]
	if sum.Requests != 2001 || len(sum.Workers) != 2 {
		t.Fatalf("merged %d requests, workers %+v", sum.Requests, sum.Workers)
	}
	for i, w := range sum.Workers {
		if w.Worker != i+1 || w.Host != "srv" || w.Clock == nil || w.Requests == 0 {
			t.Errorf("worker line %d: %+v", i, w)
		}
	}
	if !strings.Contains(stdout.String(), "worker 2 (srv): 2 clients") {
		t.Errorf("no per-worker lines:\n%s", stdout.String())
	}
	waitFor(t, "the sessions on the ssh host to end", func() bool { return len(b.sessionsLeft(t)) == 0 })
	t.Logf("%s%s", stdout.String(), stderr.String())
}

// TestBenchSSHWorkersUsage: refused before any ssh, exit 2: a loopback
// server address (the workers could not reach it), a host ssh would take
// for an option, ssh settings without ssh workers.
func TestBenchSSHWorkersUsage(t *testing.T) {
	_, errOut, code := runCLI(t, context.Background(), nil, "bench", "--workers", "ssh:a,b", "-t", "set")
	if code != 2 || !strings.Contains(errOut, "cannot reach 127.0.0.1:6379, this host's loopback") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	_, errOut, code = runCLI(t, context.Background(), nil, "bench", "--workers", "ssh:a,-oProxyCommand=x", "-t", "set")
	if code != 2 || !strings.Contains(errOut, "is not an ssh destination") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	_, errOut, code = runCLI(t, context.Background(), nil, "bench", "--workers", "2", "--no-push", "-t", "set")
	if code != 2 || !strings.Contains(errOut, "are for --workers ssh:HOST") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// TestBenchSSHWorkersLinkLost: the link goes down during an endless run;
// the coordinator fails naming the host, and the sessions there stop
// their workers and end by themselves (their heartbeat timeout).
func TestBenchSSHWorkersLinkLost(t *testing.T) {
	b := newSSHBench(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := b.command(t, ctx, "--ssh-heartbeat", "3s", "-t", "set", "-c", "4", "-n", "0", "--duration", "1h", "-q")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the workers' load to reach the server", func() bool { return commandCalls(t, b.srv)["set"] > 0 })
	link := func(state string) {
		if out, err := exec.Command("ip", "-n", b.h.Pair.Client, "link", "set", b.h.Pair.ClientIf, state).CombinedOutput(); err != nil {
			t.Fatalf("link %s: %v: %s", state, err, out)
		}
	}
	link("down")
	waitFor(t, "the sessions on the ssh host to stop their workers and end", func() bool { return len(b.sessionsLeft(t)) == 0 })
	err := cmd.Wait()
	link("up")
	if err == nil {
		t.Fatalf("bench exited 0 after losing the link:\n%s\n%s", stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "worker 1 (srv)") || !strings.Contains(stderr.String(), "the link to srv was lost") {
		t.Errorf("the error does not name the worker and its host:\n%s", stderr.String())
	}
	t.Logf("%s", stderr.String())
}

// TestBenchSSHWorkersInterrupted: SIGTERM to the coordinator stops the
// remote workers through their sessions; what they measured is kept (a
// line per worker and host, exit 143) and the sessions end.
func TestBenchSSHWorkersInterrupted(t *testing.T) {
	b := newSSHBench(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := filepath.Join(b.dir, "w.json")
	cmd := b.command(t, ctx, "-t", "set", "-c", "4", "-n", "0", "--duration", "1h", "-q", "-o", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the workers' load to reach the server", func() bool { return commandCalls(t, b.srv)["set"] > 100 })
	// ip netns exec execs the coordinator: the pid is redline's.
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 143 {
		t.Fatalf("exit %v, want 143\n%s", err, stderr.String())
	}
	doc, err := benchdata.ReadDocument(out)
	if err != nil {
		t.Fatal(err)
	}
	sum := doc.Results[0]
	if !sum.Interrupted || len(sum.Workers) != 2 || sum.Workers[0].Host != "srv" || sum.Requests == 0 || sum.Histogram.TotalCount() != sum.Requests {
		t.Errorf("partial result: interrupted %v, %d requests, workers %+v", sum.Interrupted, sum.Requests, sum.Workers)
	}
	waitFor(t, "the sessions on the ssh host to end", func() bool { return len(b.sessionsLeft(t)) == 0 })
}

// TestLabSSHWorkerHosts: a lab of two hosts whose load comes from a
// worker on the server host itself (client.worker_hosts: [srv]): the
// lab starts the server there, each run's load is one remote worker
// with its host and clock in the run's summary, and the sessions end.
func TestLabSSHWorkerHosts(t *testing.T) {
	l := newSSHLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := l.scenario(t, ctx, `
name: worker-hosts
target: {kind: ssh, host: srv}
client: {worker_hosts: [srv]}
workloads: [{name: set, bench: "-t set -c 2 -n 1500"}]
variants:
  - {name: baseline, baseline: true}
  - {name: hz, server: {config: ["hz 20"]}}
repetitions: 1
doctor: false
`, "user", "host")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("lab: %v\n%s", err, stderr.String())
	}
	res := l.result(t)
	if !res.Complete || len(res.Runs) != 2 || len(res.Scenario.Client.WorkerHosts) != 1 {
		t.Fatalf("complete %v, %d runs, client %+v", res.Complete, len(res.Runs), res.Scenario.Client)
	}
	for _, r := range res.Runs {
		s := r.Summary
		if s.Requests != 1500 || len(s.Workers) != 1 || s.Workers[0].Host != "srv" || s.Workers[0].Clock == nil {
			t.Errorf("run %d: %d requests, workers %+v", r.Seq, s.Requests, s.Workers)
		}
	}
	if l.serverRedis(t) {
		t.Errorf("a redis-server still runs on the server host")
	}
	b := &sshBench{h: l.h}
	waitFor(t, "the sessions on the ssh host to end", func() bool { return len(b.sessionsLeft(t)) == 0 })
}

// TestBenchSSHWorkersCoordinatorKilled: kill -9 of the coordinator ends
// its ssh links; each session there stops its worker and ends by itself,
// and the load stops.
func TestBenchSSHWorkersCoordinatorKilled(t *testing.T) {
	b := newSSHBench(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := b.command(t, ctx, "-t", "set", "-c", "4", "-n", "0", "--duration", "1h", "-q")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the workers' load to reach the server", func() bool { return commandCalls(t, b.srv)["set"] > 100 })
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	killed := time.Now()
	waitFor(t, "the sessions on the ssh host to stop their workers and end", func() bool { return len(b.sessionsLeft(t)) == 0 })
	t.Logf("the sessions ended %s after the kill", time.Since(killed).Round(time.Second))
	admin := redistest.Client(t, b.srv)
	waitFor(t, "the workers' connections to close", func() bool {
		return !strings.Contains(redistest.Do(t, admin, "CLIENT", "LIST").Str, "cmd=set")
	})
}
