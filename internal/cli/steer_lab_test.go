package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/labdata"
	"redline/internal/steer"
	"redline/internal/testutil"
)

// TestLabSteerVariantNetns runs a lab with a steer variant against a
// netns target whose veth has 4 queues: steer runs during the variant's
// runs in each round, follows the server end's queues to the
// redis-server, is stopped and restores, and the result and the report
// say so. veth queues have no IRQs, so there is nothing to move here.
func TestLabSteerVariantNetns(t *testing.T) {
	testutil.NeedRoot(t)
	testutil.Need(t, "ethtool")
	testutil.HostState(t)
	tfs, err := steer.OpenTracefs()
	if err != nil {
		t.Skipf("tracefs: %v", err)
	}
	tfs.Close()
	dir := t.TempDir()
	scenario := filepath.Join(dir, "steer.yaml")
	os.WriteFile(scenario, []byte(`
name: steer-netns
target: {kind: netns, queues: 4}
workloads:
  - name: set
    bench: -t set -c 16 --threads 2 -r 1000 --duration 2s
variants:
  - name: baseline
    baseline: true
  - name: steer
    steer: {period: 200ms, periods: 1, sample: 1}
repetitions: 2
doctor: false
`), 0o644)
	out, state := filepath.Join(dir, "out"), filepath.Join(dir, "state")
	stdout, stderr, code := runCLI(t, context.Background(), nil, "lab", scenario, "-o", out, "--state-dir", state, "--progress", "plain")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"starting steer for variant steer", "stopping steer for variant steer"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr)
		}
	}
	res, err := labdata.ReadResult(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Target.Topology, "4 queues") {
		t.Errorf("topology %q", res.Target.Topology)
	}
	v := res.Variants[1]
	if len(v.Steer) != 2 {
		t.Fatalf("%d steer sessions recorded, want one per round: %+v", len(v.Steer), v.Steer)
	}
	serverIf := fmt.Sprintf("rl%ds", os.Getpid())
	for _, s := range v.Steer {
		if s.Periods == 0 || s.Events == 0 || s.RestoreError != "" || !strings.Contains(s.Restored, "restored") {
			t.Errorf("round %d: %+v", s.Rep, s)
		}
		if len(s.Moves) != 0 {
			t.Errorf("round %d moved IRQs with no traffic on them: %+v", s.Rep, s.Moves)
		}
		seen := false
		for _, q := range s.Final {
			// The veth is in the lab's namespaces, which the host snapshot
			// does not see: its driver (zero-based queue numbers) is asked
			// for there.
			// Only this lab's: other labs' veths on the machine can show up
			// with a few stale matches (docs/steer.md), numbered as unknown.
			mine := strings.HasPrefix(q.Queue, fmt.Sprintf("rl%d", os.Getpid()))
			if mine && (strings.HasSuffix(q.Queue, " rx--1") || strings.HasSuffix(q.Queue, " rx-4")) {
				t.Errorf("round %d: queue %s of a 4-queue veth", s.Rep, q.Queue)
			}
			if strings.HasPrefix(q.Queue, serverIf+" rx-") && q.Matched > 0 && q.IRQ == 0 {
				seen = true
			}
		}
		if !seen {
			t.Errorf("round %d: the server end's queues are not in the map: %+v", s.Rep, s.Final)
		}
	}
	// Nothing of steer's is left in the journal (there is no journal when
	// nothing was ever moved).
	statusOut, statusErr, _ := runCLI(t, context.Background(), nil, "tune", "status", "--state-dir", state)
	if !strings.Contains(statusOut, "nothing applied") && !strings.Contains(statusErr, "nothing was applied") {
		t.Errorf("tune status after the lab:\n%s%s", statusOut, statusErr)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"redline steer during the runs", "steer ran in 2 round(s)", serverIf + " rx-"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}
