package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/redisserver"
	"redline/internal/redistest"
	"redline/internal/testutil"
	"redline/internal/tune"
)

// rewrittenSettings are the lines CONFIG REWRITE left in s's config file
// beyond the ones redisserver writes for every server: what a restart of
// s from that file brings back.
func rewrittenSettings(t *testing.T, s *redisserver.Server) []string {
	t.Helper()
	b, err := os.ReadFile(s.ConfPath)
	if err != nil {
		t.Fatal(err)
	}
	managed := []string{"bind ", "port ", "dir ", "logfile ", "daemonize ", "save ", "appendonly ", "protected-mode ", "unixsocket", "#", "user "}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		keep := strings.TrimSpace(l) != ""
		for _, m := range managed {
			keep = keep && !strings.HasPrefix(l, m)
		}
		if keep {
			out = append(out, l)
		}
	}
	return out
}

// inFreshNetns loads the drop-in into a new network namespace as
// systemd-sysctl would at boot (sysctl -p of the file alone: --system
// would also load the host's other sysctl.d files, whose non-namespaced
// values would land on this machine) and reads a sysctl there.
func inFreshNetns(t *testing.T, dropIn, name string) string {
	t.Helper()
	script := `[ -f "$1" ] && { sysctl -q -p "$1" >/dev/null || exit 1; }; cat /proc/sys/` + strings.ReplaceAll(name, ".", "/")
	out, err := exec.Command("unshare", "--net", "sh", "-c", script, "sh", dropIn).CombinedOutput()
	if err != nil {
		t.Fatalf("load %s in a fresh netns: %v\n%s", dropIn, err, out)
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

// TestTunePersistBootPath: tune persist of a plan with a namespaced
// sysctl, a kernel file and a Redis setting writes the sysctl.d drop-in,
// the boot plan, the unit and its link (below a rehearsal root, never
// this machine's /etc) and rewrites the server's config file; a fresh
// network namespace loading the drop-in and a server restarted from the
// rewritten file come up with the plan's values. After tune rollback the
// files are gone, and the same fresh namespace and restart give the
// originals.
func TestTunePersistBootPath(t *testing.T) {
	testutil.NeedRoot(t)
	testutil.NeedTools(t, "unshare", "sysctl")
	s := redistest.Start(t)
	ctx := context.Background()
	root, _ := makeTuneTree(t)
	state := filepath.Join(t.TempDir(), "state")
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	body := fmt.Sprintf(`version: 1
redis: {addr: %q}
changes:
  - {kind: sysctl, target: net.ipv4.ip_local_port_range, value: "20000 50000"}
  - {kind: file, target: /sys/kernel/mm/transparent_hugepage/enabled, value: madvise}
  - {kind: redis-config, target: hz, value: "33"}
`, s.Addr())
	os.WriteFile(plan, []byte(body), 0o644)
	original := inFreshNetns(t, "/nonexistent", "net.ipv4.ip_local_port_range")

	out, errs, code := runCLI(t, ctx, nil, "tune", "persist", plan, "--root", root, "--state-dir", state, "--yes")
	if code != 0 || !strings.Contains(out, "persisted") {
		t.Fatalf("persist: code %d\n%s%s", code, out, errs)
	}
	dropIn := filepath.Join(root, tune.PersistSysctlFile)
	if got := inFreshNetns(t, dropIn, "net.ipv4.ip_local_port_range"); got != "20000 50000" {
		t.Errorf("a fresh netns after persist: %q, want 20000 50000", got)
	}
	bootPlan, err := tune.ReadPlanFile(filepath.Join(root, tune.PersistBootPlan))
	if err != nil || len(bootPlan.Changes) != 1 || bootPlan.Changes[0].Target != "/sys/kernel/mm/transparent_hugepage/enabled" {
		t.Errorf("boot plan: %+v (%v)", bootPlan, err)
	}
	unit, _ := os.ReadFile(filepath.Join(root, tune.PersistBootUnit))
	link, _ := os.Readlink(filepath.Join(root, tune.PersistBootLink))
	if !strings.Contains(string(unit), "tune apply --boot "+tune.PersistBootPlan) || link != tune.PersistBootUnit {
		t.Errorf("boot unit %q, link %q", unit, link)
	}
	// A reboot puts the kernel's default back; the boot unit's apply
	// brings the plan's value back, journaled as any apply.
	thp := filepath.Join(root, "sys/kernel/mm/transparent_hugepage/enabled")
	os.WriteFile(thp, []byte("[always] madvise never\n"), 0o644)
	if out, errs, code := runCLI(t, ctx, nil, "tune", "apply", "--boot", filepath.Join(root, tune.PersistBootPlan), "--root", root, "--state-dir", state); code != 0 {
		t.Fatalf("the boot unit's apply: code %d\n%s%s", code, out, errs)
	}
	if b, _ := os.ReadFile(thp); !strings.Contains(string(b), "[madvise]") {
		t.Errorf("THP after the boot apply: %q, want madvise", b)
	}
	restarted := redistest.Start(t, rewrittenSettings(t, s)...)
	if v := redistest.ConfigValue(t, restarted.Addr(), "hz"); v != "33" {
		t.Errorf("a server restarted from the rewritten config: hz %s, want 33", v)
	}
	if out, _, code := runCLI(t, ctx, nil, "tune", "verify", "--state-dir", state); code != 0 || !strings.Contains(out, "after a reboot") {
		t.Errorf("verify after persist: code %d\n%s", code, out)
	}

	out, errs, code = runCLI(t, ctx, nil, "tune", "rollback", "--state-dir", state)
	if code != 0 {
		t.Fatalf("rollback: code %d\n%s%s", code, out, errs)
	}
	for _, f := range []string{tune.PersistSysctlFile, tune.PersistBootPlan, tune.PersistBootUnit, tune.PersistBootLink} {
		if _, err := os.Lstat(filepath.Join(root, f)); !os.IsNotExist(err) {
			t.Errorf("%s after rollback: %v, want removed", f, err)
		}
	}
	if b, _ := os.ReadFile(thp); !strings.Contains(string(b), "[always]") {
		t.Errorf("THP after rollback: %q, want always", b)
	}
	if got := inFreshNetns(t, dropIn, "net.ipv4.ip_local_port_range"); got != original {
		t.Errorf("a fresh netns after rollback: %q, want the original %q", got, original)
	}
	again := redistest.Start(t, rewrittenSettings(t, s)...)
	if v := redistest.ConfigValue(t, again.Addr(), "hz"); v != "10" {
		t.Errorf("a server restarted from the config after rollback: hz %s, want 10", v)
	}
}

// TestTunePersistRefusesAnotherBinary: a plan carrying a boot unit that
// runs another program than this redline (a plan someone else wrote) is
// not applied: the unit would run it as root at every boot.
func TestTunePersistRefusesAnotherBinary(t *testing.T) {
	testutil.NeedRoot(t)
	root, _ := makeTuneTree(t)
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	unit := "[Unit]\nExecStart=/tmp/not-redline tune apply --boot /etc/redline/boot-plan.yaml"
	body := fmt.Sprintf("version: 1\nchanges:\n  - {kind: persist-file, target: %s, value: %q}\n", tune.PersistBootUnit, unit)
	os.WriteFile(plan, []byte(body), 0o644)
	out, errs, code := runCLI(t, context.Background(), nil, "tune", "apply", plan, "--root", root, "--state-dir", filepath.Join(t.TempDir(), "state"), "--yes")
	if code == 0 || !strings.Contains(out+errs, "not this redline") {
		t.Errorf("apply of a unit running another program: code %d\n%s%s", code, out, errs)
	}
	if _, err := os.Lstat(filepath.Join(root, tune.PersistBootUnit)); !os.IsNotExist(err) {
		t.Errorf("the unit was written: %v", err)
	}
}
