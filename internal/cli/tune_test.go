package cli

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"redline/internal/doctor"
	"redline/internal/tune"
)

// tuneTree is a small host tree to rehearse on.
var tuneTree = map[string]string{
	"proc/sys/net/core/somaxconn":                "128\n",
	"proc/sys/vm/overcommit_memory":              "0\n",
	"proc/sys/net/ipv4/ip_local_port_range":      "32768\t60999\n",
	"proc/irq/24/smp_affinity_list":              "0-7\n",
	"sys/kernel/mm/transparent_hugepage/enabled": "[always] madvise never\n",
}

func makeTuneTree(t *testing.T) (root string, files map[string]string) {
	t.Helper()
	root = t.TempDir()
	for p, c := range tuneTree {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, readTree(t, root)
}

func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(root, p)
			out[rel] = string(b)
		}
		return err
	})
	return out
}

func sameTree(t *testing.T, want, got map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("tree has %d files, want %d", len(got), len(want))
	}
}

const tuneChanges = `- kind: sysctl
  target: net.core.somaxconn
  value: "4096"
  why: raise the listen backlog
  rule: test
- kind: file
  target: /proc/irq/24/smp_affinity_list
  value: "1"
- kind: file
  target: /sys/kernel/mm/transparent_hugepage/enabled
  value: madvise
`

func TestTuneCLIFullCycle(t *testing.T) {
	ctx := context.Background()
	root, orig := makeTuneTree(t)
	dir := t.TempDir()
	changes := filepath.Join(dir, "changes.yaml")
	os.WriteFile(changes, []byte(tuneChanges), 0o644)
	plan := filepath.Join(dir, "plan.yaml")
	state := filepath.Join(dir, "state")

	out, errs, code := runCLI(t, ctx, nil, "tune", "plan", changes, "--root", root, "-o", plan)
	if code != 0 || !strings.Contains(out, "0-7 -> 1") || !strings.Contains(out, "128 -> 4096") || !strings.Contains(out, "why: raise the listen backlog [test]") {
		t.Fatalf("plan: code %d\n%s%s", code, out, errs)
	}
	if b, _ := os.ReadFile(plan); !strings.Contains(string(b), `value: "1" # now: 0-7`) {
		t.Fatalf("plan file lacks the live value comment:\n%s", b)
	}

	out, errs, code = runCLI(t, ctx, nil, "tune", "apply", plan, "--root", root, "--state-dir", state)
	if code != ExitError || !strings.Contains(errs, "--yes") {
		t.Fatalf("apply without --yes: code %d\n%s%s", code, out, errs)
	}
	sameTree(t, orig, readTree(t, root))

	out, errs, code = runCLI(t, ctx, nil, "tune", "apply", plan, "--root", root, "--state-dir", state, "--yes")
	if code != 0 || !strings.Contains(out, "applied 3") {
		t.Fatalf("apply: code %d\n%s%s", code, out, errs)
	}
	if out, _, code = runCLI(t, ctx, nil, "tune", "verify", plan, "--root", root); code != 0 || !strings.HasSuffix(out, "the host matches the plan: all 3 changes in place\n") {
		t.Fatalf("verify plan after apply: code %d\n%s", code, out)
	}
	if out, _, code = runCLI(t, ctx, nil, "tune", "verify", "--state-dir", state); code != 0 || !strings.HasSuffix(out, "the host matches the journal: all 3 changes in place\n") {
		t.Fatalf("verify journal after apply: code %d\n%s", code, out)
	}

	// Someone changes somaxconn behind redline's back.
	os.WriteFile(filepath.Join(root, "proc/sys/net/core/somaxconn"), []byte("2048\n"), 0o644)
	out, _, code = runCLI(t, ctx, nil, "tune", "status", "--state-dir", state)
	if code != 0 || !strings.Contains(out, "drift") || !strings.Contains(out, "now 2048") || !strings.Contains(out, "lost on: reboot") {
		t.Fatalf("status with drift: code %d\n%s", code, out)
	}
	if out, errs, code = runCLI(t, ctx, nil, "tune", "verify", "--state-dir", state); code != ExitFailure || !strings.HasSuffix(out, "the host does not match the journal: 1 of 3 changes not in place\n") {
		t.Fatalf("verify with drift: code %d %s%s", code, out, errs)
	}

	out, errs, code = runCLI(t, ctx, nil, "tune", "rollback", "--state-dir", state)
	if code != 0 || !strings.Contains(out, "restored 2, left alone (drift) 1") {
		t.Fatalf("rollback: code %d\n%s%s", code, out, errs)
	}
	orig["proc/sys/net/core/somaxconn"] = "2048\n"
	sameTree(t, orig, readTree(t, root))
	// The journal is archived, but the value the rollback left is said,
	// with why, not only "nothing applied".
	if out, _, _ = runCLI(t, ctx, nil, "tune", "status", "--state-dir", state); !strings.Contains(out, "nothing applied") ||
		!strings.Contains(out, "a rollback left 1 value(s) alone") || !strings.Contains(out, "sysctl net.core.somaxconn: 128 -> 4096 by redline; now 2048") {
		t.Fatalf("status after rollback:\n%s", out)
	}
}

func TestTuneCLIRefusalExitsOne(t *testing.T) {
	ctx := context.Background()
	root, _ := makeTuneTree(t)
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.json")
	os.WriteFile(plan, []byte(`{"version":1,"changes":[
		{"kind":"sysctl","target":"net.core.somaxconn","value":"4096"},
		{"kind":"sysctl","target":"net.core.no_such_knob","value":"1"}]}`), 0o644)
	out, errs, code := runCLI(t, ctx, nil, "tune", "apply", plan, "--root", root, "--state-dir", filepath.Join(dir, "s"), "--yes")
	if code != ExitFailure || !strings.Contains(out, "refused") || !strings.Contains(out, "missing on this host") || !strings.Contains(errs, "1 change(s) refused") {
		t.Fatalf("apply with a missing sysctl: code %d\n%s%s", code, out, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "proc/sys/net/core/somaxconn")); string(b) != "4096\n" {
		t.Errorf("the possible change was not applied: %q", b)
	}
}

func TestTuneCLIBadInput(t *testing.T) {
	ctx := context.Background()
	root, _ := makeTuneTree(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("version: 1\nchanges:\n  - kind: file\n    target: /etc/passwd\n    value: x\n"), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"tune", "plan", "--root", root}, "nothing to plan from"},
		{[]string{"tune", "apply", bad, "--root", root, "--yes", "--state-dir", dir}, "outside /proc and /sys"},
		{[]string{"tune", "plan", "--profile", "irq-lokal", "--root", root}, "unknown profile"},
		{[]string{"tune", "apply", filepath.Join(dir, "missing.yaml"), "--yes", "--state-dir", dir}, "no such file"},
		{[]string{"tune", "plan", "--profile", "net-sysctl", "--root", filepath.Join(dir, "nope")}, "not a directory"},
	}
	for _, c := range cases {
		_, errs, code := runCLI(t, ctx, nil, c.args...)
		if code != ExitError || !strings.Contains(errs, c.want) {
			t.Errorf("%v: code %d, stderr %q, want it to say %q", c.args, code, errs, c.want)
		}
	}
}

// A saved doctor report becomes a plan of its fixes, each tagged with its
// finding's rule.
func TestTuneCLIPlanFromDoctorReport(t *testing.T) {
	ctx := context.Background()
	root, _ := makeTuneTree(t)
	report, _, code := runCLI(t, ctx, nil, "doctor", "--root", root, "--json", "--no-redis")
	if code == ExitError {
		t.Fatalf("doctor could not run on the tree:\n%s", report)
	}
	path := filepath.Join(t.TempDir(), "doctor.json")
	os.WriteFile(path, []byte(report), 0o644)
	out, errs, code := runCLI(t, ctx, nil, "tune", "plan", path, "--root", root, "--min-severity", "info", "--json")
	if code != 0 {
		t.Fatalf("plan from doctor: code %d\n%s", code, errs)
	}
	if !strings.Contains(out, `"target": "vm.overcommit_memory"`) || !strings.Contains(out, `"rule": "overcommit`) {
		t.Fatalf("the plan lacks doctor's overcommit fix:\n%s", out)
	}
}

func TestTuneCLIProfileOnTree(t *testing.T) {
	ctx := context.Background()
	root, _ := makeTuneTree(t)
	out, errs, code := runCLI(t, ctx, nil, "tune", "plan", "--profile", "net-sysctl,memory", "--root", root)
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{"128 -> 65535", "32768 60999 -> 10000 65535", "vm.overcommit_memory", "note: tcp_rmem/tcp_wmem left alone"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan output lacks %q:\n%s", want, out)
		}
	}
}

// tune plan takes a saved doctor report and --doctor through the one
// policy (doctor.Report.Plan under doctor.ReviewedPlan), so both give the
// plan the report itself gives.
func TestTuneCLIPlanSameFromSavedAndLiveDoctor(t *testing.T) {
	ctx := context.Background()
	root, _ := makeTuneTree(t)
	report, _, code := runCLI(t, ctx, nil, "doctor", "--root", root, "--json", "--no-redis")
	if code == ExitError {
		t.Fatalf("doctor could not run on the tree:\n%s", report)
	}
	path := filepath.Join(t.TempDir(), "doctor.json")
	if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := doctor.ReadReport(strings.NewReader(report))
	if err != nil {
		t.Fatal(err)
	}
	want := rep.Plan(doctor.ReviewedPlan(doctor.Info))
	if len(want.Changes) == 0 {
		t.Fatal("the tree should give doctor something to fix")
	}
	for _, src := range [][]string{{path}, {"--doctor"}} {
		args := append([]string{"tune", "plan", "--root", root, "--min-severity", "info", "--json"}, src...)
		out, errs, code := runCLI(t, ctx, nil, args...)
		if code != 0 {
			t.Fatalf("%v: code %d\n%s", src, code, errs)
		}
		var got struct{ Plan tune.Plan }
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want.Changes, got.Plan.Changes); d != "" {
			t.Errorf("%v: changes differ from Report.Plan (-want +got):\n%s", src, d)
		}
		if d := cmp.Diff(want.Notes, got.Plan.Notes); d != "" {
			t.Errorf("%v: notes differ from Report.Plan (-want +got):\n%s", src, d)
		}
	}
}
