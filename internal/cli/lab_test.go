package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"redline/internal/testutil"
	"redline/internal/tune"
	"strings"
	"syscall"
	"testing"
	"time"

	"redline/internal/labdata"
)

// TestMain lets a test run redline itself as a child process (to kill it).
func TestMain(m *testing.M) {
	if os.Getenv("REDLINE_TEST_MAIN") == "1" {
		if os.Getenv("REDLINE_TEST_ANNOUNCE_STOP") == "1" { // stop_test.go
			testHookStopping = func() { fmt.Fprintln(os.Stderr, stoppingLine) }
		}
		if os.Getenv("REDLINE_TEST_SIGNAL_AT_START") == "1" { // stop_test.go: a stop while starting
			syscall.Kill(os.Getpid(), syscall.SIGINT)
		}
		os.Exit(Main(os.Args[1:]))
	}
	if gw := os.Getenv("REDLINE_TEST_PINGER"); gw != "" {
		os.Exit(pinger(gw)) // steer_kill_test.go
	}
	os.Exit(m.Run())
}

func readSysctl(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/" + strings.ReplaceAll(name, ".", "/"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestLabNetnsTunedEndToEnd runs a tiny scenario across two network
// namespaces with a tuned variant (the server namespace's own sysctls) and
// checks the results, the reports and that everything was undone.
func TestLabNetnsTunedEndToEnd(t *testing.T) {
	testutil.HostState(t)
	testutil.Heavy(t)
	dir := t.TempDir()
	scenario := filepath.Join(dir, "tiny.yaml")
	os.WriteFile(scenario, []byte(`
name: tiny-netns
description: two namespaces joined by a veth pair
target: {kind: netns}
workloads:
  - name: set
    bench: redis-benchmark -t set -c 8 -n 4000 -r 1000 -q -h 192.168.100.2
variants:
  - name: baseline
    baseline: true
  - name: tuned
    tune: {profiles: [net-sysctl], restart: true}
repetitions: 3
`), 0o644)
	before := readSysctl(t, "net.core.somaxconn")
	out := filepath.Join(dir, "out")
	state := filepath.Join(dir, "state")
	stdout, stderr, code := runCLI(t, context.Background(), nil, "lab", scenario, "--out", out, "--state-dir", state, "--progress", "none")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	res, err := labdata.ReadResult(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || len(res.Runs) != 6 || res.Target.Kind != "netns" {
		t.Fatalf("complete %v, %d runs, target %+v", res.Complete, len(res.Runs), res.Target)
	}
	var tuned labdata.VariantInfo
	for _, v := range res.Variants {
		if v.Name == "tuned" {
			tuned = v
		}
	}
	// The server was restarted after the changes (restart: true), so it
	// listened with the raised backlog: 1 start + 3 restarts after applying
	// + 3 after rolling back (the last one at the end is skipped or not).
	if len(res.Target.Logs) < 6 {
		t.Errorf("%d server starts, want at least 6 with restart: true", len(res.Target.Logs))
	}
	if !tuned.RolledBack || !planHas(tuned.Plan, "net.core.somaxconn", "applied") {
		t.Fatalf("tuned variant: rolled back %v, plan %+v", tuned.RolledBack, tuned.Plan)
	}
	// The tuning happened in the server's namespace, not on this host.
	if after := readSysctl(t, "net.core.somaxconn"); after != before {
		t.Errorf("host somaxconn changed from %s to %s", before, after)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"# redline lab: tiny-netns", "## Summary", "## Variants and their plans", "net.core.somaxconn", "veth"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	html, _ := os.ReadFile(filepath.Join(out, "report.html"))
	if !strings.Contains(string(html), "<svg") || strings.Contains(string(html), "src=\"http") {
		t.Errorf("report.html is not a self-contained page with charts")
	}
	f, _ := os.Open(filepath.Join(out, "runs.csv"))
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 7 {
		t.Errorf("runs.csv: %d rows, %v; want a header and 6 runs", len(rows), err)
	}
	if !strings.Contains(stdout, "report: "+filepath.Join(out, "report.html")) {
		t.Errorf("stdout does not say where the report is:\n%s", stdout)
	}
	// Nothing is left applied in the lab's journal.
	statusOut, _, _ := runCLI(t, context.Background(), nil, "tune", "status", "--state-dir", state)
	if !strings.Contains(statusOut, "nothing applied") {
		t.Errorf("tune status after the lab:\n%s", statusOut)
	}
	// Only this process's: other test binaries on a shared machine make
	// their own rl-PID-* pairs at the same time.
	mine := fmt.Sprintf("rl-%d-", os.Getpid())
	for _, e := range mustReadDir(t, "/run/netns") {
		if strings.HasPrefix(e, mine) {
			t.Errorf("namespace %s left behind", e)
		}
	}
}

func mustReadDir(t *testing.T, dir string) []string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func planHas(steps []labdata.PlanStep, target, status string) bool {
	for _, s := range steps {
		if s.Change.Target == target && s.Status == status {
			return true
		}
	}
	return false
}

func TestLabBadScenario(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(path, []byte("name: x\nworkloads:\n  - name: a\n    bench: -t set\n    clinets: 5\n"), 0o644)
	_, stderr, code := runCLI(t, context.Background(), nil, "lab", path)
	if code != ExitError || !strings.Contains(stderr, "line 5: field clinets not found") {
		t.Errorf("exit %d, %q", code, stderr)
	}
}

// TestLabKilledThenRollback kills a lab run while its tuned variant is
// applied and checks that the partial results are readable and that
// "redline tune rollback" restores the host. Its change is host-wide and
// other packages' tests run redis-servers beside it, so the scenario
// allows host-wide changes (host_wide: allow), as a user must.
func TestLabKilledThenRollback(t *testing.T) {
	testutil.HostWrites(t)
	const sysctl = "net.ipv4.tcp_keepalive_probes"
	orig := readSysctl(t, sysctl)
	t.Cleanup(func() { os.WriteFile("/proc/sys/net/ipv4/tcp_keepalive_probes", []byte(orig), 0o644) })
	want := "8"
	if orig == "8" {
		want = "7"
	}
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.yaml")
	os.WriteFile(plan, []byte("version: 1\nchanges:\n  - {kind: sysctl, target: "+sysctl+", value: \""+want+"\"}\n"), 0o644)
	scenario := filepath.Join(dir, "s.yaml")
	os.WriteFile(scenario, []byte(`
name: killed
workloads: [{name: set, bench: "-t set -c 2 --duration 2s"}]
variants:
  - {name: baseline, baseline: true}
  - {name: tuned, tune: {plan: `+plan+`}}
repetitions: 10
doctor: false
host_wide: allow
`), 0o644)
	out, state := filepath.Join(dir, "out"), filepath.Join(dir, "state")
	cmd := exec.Command(os.Args[0], "lab", scenario, "--out", out, "--state-dir", state, "--progress", "plain")
	cmd.Env = append(os.Environ(), "REDLINE_TEST_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for readSysctl(t, sysctl) != want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if got := readSysctl(t, sysctl); got != want {
		t.Fatalf("the tuned variant never applied (%s = %s)", sysctl, got)
	}
	res, err := labdata.ReadResult(filepath.Join(out, "result.json"))
	// The variants run in a random order within a round: the tuned one
	// may have been the first, with nothing measured before the kill.
	if err != nil || res.Complete {
		t.Fatalf("partial results: %v, %+v", err, res)
	}
	_, stderr, code := runCLI(t, context.Background(), nil, "tune", "rollback", "--state-dir", state)
	if code != 0 {
		t.Fatalf("rollback exit %d: %s", code, stderr)
	}
	if got := readSysctl(t, sysctl); got != orig {
		t.Errorf("%s = %s after rollback, want %s", sysctl, got, orig)
	}
}

// TestLabRefusesAHeldStateDir: a second lab that tunes with the state
// directory of one already running refuses before it starts anything,
// instead of interleaving its session with the first one's in the journal.
func TestLabRefusesAHeldStateDir(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	hold, err := tune.HoldStateDir(state, "redline lab")
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Release()
	scenario := filepath.Join(dir, "tuned.yaml")
	os.WriteFile(scenario, []byte(`
name: tuned
target: {kind: managed}
workloads:
  - {name: set, bench: -t set -n 100}
variants:
  - {name: baseline, baseline: true}
  - {name: tuned, tune: {profiles: [net-sysctl]}}
`), 0o644)
	out := filepath.Join(dir, "out")
	_, stderr, code := runCLI(t, context.Background(), nil, "lab", scenario, "--state-dir", state, "-o", out, "--progress", "none")
	if code != ExitError || !strings.Contains(stderr, "in use by redline lab (pid") {
		t.Fatalf("exit %d, stderr %q; want exit %d naming the lab that holds %s", code, stderr, ExitError, state)
	}
	if _, err := os.Stat(filepath.Join(out, "result.json")); err == nil {
		t.Error("the refused lab wrote results: it started")
	}
}

// TestOpenLabHostHolds: the lab's host is where its state directory is
// held: a local target's Local holds it from the open when a variant
// changes the host (a second refuses), and releases it when closed; a
// dry-run steer, or a target of kind ssh (whose session holds the server
// host's), holds nothing here.
func TestOpenLabHostHolds(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	var errb bytes.Buffer
	s := &streams{out: &errb, err: &errb}
	f := &labFlags{stateDir: state}
	tuned := labdata.Scenario{Target: labdata.TargetSpec{Kind: "managed"}, Variants: []labdata.VariantSpec{{Name: "t", Tune: &labdata.TuneSpec{}}}}
	first, err := openLabHost(s, f, tuned)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openLabHost(s, f, tuned); err == nil || !strings.Contains(err.Error(), "in use by redline lab (pid") {
		t.Fatalf("a second lab tuning with the held state directory: %v", err)
	}
	dry := labdata.Scenario{Target: labdata.TargetSpec{Kind: "managed"}, Variants: []labdata.VariantSpec{{Name: "s", Steer: &labdata.SteerSpec{DryRun: true}}}}
	remote := tuned
	remote.Target = labdata.TargetSpec{Kind: "ssh", Host: "redis-a"}
	for _, sc := range []labdata.Scenario{dry, remote} {
		h, err := openLabHost(s, f, sc)
		if err != nil {
			t.Fatalf("%s target, variant %s: %v", sc.Target.Kind, sc.Variants[0].Name, err)
		}
		h.Close()
	}
	first.Close()
	again, err := openLabHost(s, f, tuned)
	if err != nil {
		t.Fatalf("after the first lab closed its host: %v", err)
	}
	again.Close()
	if errb.Len() > 0 {
		t.Errorf("closing said: %s", errb.String())
	}
}
