package tune

import (
	"errors"
	"os"
	"path/filepath"
	"redline/internal/testutil"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"redline/internal/change"
)

func TestApplyRollbackByteIdentical(t *testing.T) {
	testutil.Heavy(t)
	s, root, orig := rehearsal(t)
	state := t.TempDir()
	res, err := Apply(bg, s, smallPlan(), ApplyOptions{StateDir: state})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if n := res.Count(StatusApplied); n != len(smallPlan().Changes) {
		t.Fatalf("applied %d of %d: %+v", n, len(smallPlan().Changes), res.Outcomes)
	}
	// The kernel's formatting is what tune must read back and accept.
	want := map[string]string{
		"proc/sys/net/ipv4/ip_local_port_range":      "1025\t65000",
		"proc/irq/25/smp_affinity_list":              "2-3",
		"proc/irq/27/smp_affinity":                   "10",
		"sys/class/net/eth0/queues/rx-0/rps_cpus":    "0f",
		"sys/kernel/mm/transparent_hugepage/enabled": "always [madvise] never",
		"proc/sys/vm/dirty_ratio":                    "0",
	}
	for rel, v := range want {
		if got := readRel(t, root, rel); got != v {
			t.Errorf("%s = %q after apply, want %q", rel, got, v)
		}
	}
	rb, err := Rollback(bg, RollbackOptions{StateDir: state})
	if err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if rb.Count(StatusRestored) != len(smallPlan().Changes) || !rb.Archived {
		t.Fatalf("rollback: %+v", rb)
	}
	requireSame(t, orig, snapshot(t, root), "apply then rollback")
	if _, err := os.Stat(filepath.Join(state, journalName)); !os.IsNotExist(err) {
		t.Errorf("journal still active after a complete rollback: %v", err)
	}
	hist, _ := os.ReadDir(filepath.Join(state, historyDir))
	if len(hist) != 1 {
		t.Errorf("history holds %d journals, want 1", len(hist))
	}
}

// TestKillAfterEveryStep kills the apply (in-process: the hook stops it
// dead, closing the journal as process exit would, running nothing else)
// at every phase of every step, then rolls back from the journal alone.
func TestKillAfterEveryStep(t *testing.T) {
	testutil.Heavy(t)
	n := len(smallPlan().Changes)
	for step := 1; step <= n; step++ {
		for at := phase(0); at < phases; at++ {
			s, root, orig := rehearsal(t)
			state := t.TempDir()
			killed := false
			o := ApplyOptions{StateDir: state, hook: func(k int, p phase) bool {
				killed = killed || (k == step && p == at)
				return k == step && p == at
			}}
			_, err := Apply(bg, s, smallPlan(), o)
			if !killed || !errors.Is(err, errKilled) {
				t.Fatalf("step %d phase %d: apply was not killed: %v", step, at, err)
			}
			st, err := Journaled(bg, StatusOptions{StateDir: state})
			if err != nil || len(st.Sessions) != 1 || st.Sessions[0].End != "" {
				t.Fatalf("step %d phase %d: status after kill: %+v %v", step, at, st, err)
			}
			if _, err := Apply(bg, RehearsalSystem(root), smallPlan(), ApplyOptions{StateDir: state}); err == nil || !strings.Contains(err.Error(), "interrupted") {
				t.Fatalf("step %d phase %d: a new apply over an interrupted one was not refused: %v", step, at, err)
			}
			rb, err := Rollback(bg, RollbackOptions{StateDir: state})
			if err != nil {
				t.Fatalf("step %d phase %d: rollback: %v", step, at, err)
			}
			if !rb.Archived || rb.Count(StatusDrift) != 0 {
				t.Fatalf("step %d phase %d: rollback %+v", step, at, rb.Outcomes)
			}
			requireSame(t, orig, snapshot(t, root), "kill then rollback")
		}
	}
}

func TestFailureRollsBackWhatWasApplied(t *testing.T) {
	s, root, orig := rehearsal(t)
	simOf(s).Fail("/sys/class/net/eth0/queues/rx-0/rps_cpus", syscall.EINVAL)
	state := t.TempDir()
	res, err := Apply(bg, s, smallPlan(), ApplyOptions{StateDir: state})
	if err == nil || !strings.Contains(err.Error(), "rps_cpus") || !strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("apply with a failing write: %v", err)
	}
	// The 7 changes before the failing one, and the failing one itself,
	// which is found unchanged.
	if res.Undo == nil || res.Undo.Count(StatusRestored) != 8 || !strings.Contains(res.Undo.Outcomes[0].Reason, "failed write left it unchanged") {
		t.Fatalf("undo after failure: %+v", res.Undo)
	}
	requireSame(t, orig, snapshot(t, root), "failed apply")
	if st, _ := Journaled(bg, StatusOptions{StateDir: state}); st.Pending() != 0 {
		t.Errorf("journal still has %d pending changes", st.Pending())
	}
}

// A write the kernel accepts but does not keep is caught by the read-back
// (intel/ethernet-linux-ice #42).
func TestReadBackMismatchFails(t *testing.T) {
	s, root, orig := rehearsal(t)
	s.FS = &lyingFS{FS: s.FS, name: "/proc/irq/26/smp_affinity_list"}
	_, err := Apply(bg, s, smallPlan(), ApplyOptions{StateDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "read back") {
		t.Fatalf("apply: %v", err)
	}
	requireSame(t, orig, snapshot(t, root), "mismatch")
}

// lyingFS accepts writes to name without changing it.
type lyingFS struct {
	FS
	name string
}

func (l *lyingFS) WriteFile(name string, data []byte) error {
	if name == l.name {
		return nil
	}
	return l.FS.WriteFile(name, data)
}

func TestRefusalsAreReportOnly(t *testing.T) {
	s, root, orig := rehearsal(t)
	simOf(s).Fail("/proc/irq/25/smp_affinity_list", syscall.EIO)
	simOf(s).Fail("/proc/irq/26/smp_affinity_list", syscall.EPERM) // a kernel-managed IRQ
	simOf(s).ReadOnly("/proc/sys")
	p := smallPlan()
	p.Changes = append(p.Changes, change.Change{Kind: change.KindFile, Target: "/sys/class/net/eth0/queues/rx-7/rps_cpus", Value: "1"})
	state := t.TempDir()
	res, err := Apply(bg, s, p, ApplyOptions{StateDir: state})
	if err != nil {
		t.Fatalf("apply with refusals: %v", err)
	}
	got := map[string]string{}
	for _, o := range res.Outcomes {
		if o.Status == StatusRefused {
			got[o.Change.Target] = o.Reason
		}
	}
	for target, want := range map[string]string{
		"/proc/irq/25/smp_affinity_list":           "unchangeable",
		"/proc/irq/26/smp_affinity_list":           "EPERM: kernel-managed",
		"net.core.somaxconn":                       "read-only",
		"vm.dirty_bytes":                           "read-only",
		"/sys/class/net/eth0/queues/rx-7/rps_cpus": "missing",
	} {
		if !strings.Contains(got[target], want) {
			t.Errorf("%s: refusal %q, want it to say %q", target, got[target], want)
		}
	}
	if n := res.Count(StatusApplied); n != 6 {
		t.Errorf("applied %d changes, want the 6 that are possible", n)
	}
	if _, err := Rollback(bg, RollbackOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	requireSame(t, orig, snapshot(t, root), "refusals")
}

func TestNotRootRefusesHostWrites(t *testing.T) {
	s, _, _ := rehearsal(t)
	s.Live, s.euid = true, 1000
	outs, err := Preview(bg, s, smallPlan())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if o.Status != StatusRefused || !strings.Contains(o.Reason, "not root") {
			t.Errorf("%s: %s %q, want refused as not root", o.Change.Key(), o.Status, o.Reason)
		}
	}
}

func TestDriftIsLeftAndReported(t *testing.T) {
	s, root, orig := rehearsal(t)
	state := t.TempDir()
	if _, err := Apply(bg, s, smallPlan(), ApplyOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	// An administrator changes two values behind redline's back.
	os.WriteFile(filepath.Join(root, "proc/sys/net/core/somaxconn"), []byte("1024\n"), 0o644)
	os.WriteFile(filepath.Join(root, "proc/irq/24/smp_affinity_list"), []byte("5\n"), 0o644)
	st, err := Journaled(bg, StatusOptions{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	drift := map[string]bool{}
	for _, c := range st.Sessions[0].Changes {
		drift[c.Change.Target] = c.Status == StatusDrift
	}
	if !drift["net.core.somaxconn"] || !drift["/proc/irq/24/smp_affinity_list"] || drift["vm.dirty_bytes"] || st.Clean() {
		t.Fatalf("status did not report exactly the drift: %+v", st.Sessions[0].Changes)
	}
	rb, err := Rollback(bg, RollbackOptions{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	if rb.Count(StatusDrift) != 2 || rb.Count(StatusRestored) != len(smallPlan().Changes)-2 {
		t.Fatalf("rollback: %+v", rb.Outcomes)
	}
	want := orig
	want["proc/sys/net/core/somaxconn"] = "-rw-r--r-- 1024\n"
	want["proc/irq/24/smp_affinity_list"] = "-rw-r--r-- 5\n"
	requireSame(t, want, snapshot(t, root), "drift")
	// The journal is archived; status still says what the rollback left,
	// not just "nothing applied".
	st, err = Journaled(bg, StatusOptions{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	left := map[string]string{}
	for _, e := range st.Left {
		left[e.Change.Target] = e.Detail
	}
	if len(st.Sessions) != 0 || len(left) != 2 || !strings.Contains(left["net.core.somaxconn"], "changed by someone else") {
		t.Errorf("status after the rollback: sessions %d, left %v; want the two drifted values", len(st.Sessions), left)
	}
}

// Two applies stack; rollback unwinds both, newest first.
func TestStackedApplies(t *testing.T) {
	s, root, orig := rehearsal(t)
	state := t.TempDir()
	first := &Plan{Version: 1, Changes: []change.Change{{Kind: change.KindSysctl, Target: "net.core.somaxconn", Value: "8192"}}}
	second := &Plan{Version: 1, Changes: []change.Change{{Kind: change.KindSysctl, Target: "net.core.somaxconn", Value: "16384"},
		{Kind: change.KindFile, Target: "/proc/irq/24/smp_affinity_list", Value: "0"}}}
	for _, p := range []*Plan{first, second} {
		if _, err := Apply(bg, s, p, ApplyOptions{StateDir: state}); err != nil {
			t.Fatal(err)
		}
	}
	rb, err := Rollback(bg, RollbackOptions{StateDir: state, Last: true})
	if err != nil || rb.Archived {
		t.Fatalf("rollback --last: %+v %v", rb, err)
	}
	if got := readRel(t, root, "proc/sys/net/core/somaxconn"); got != "8192" {
		t.Fatalf("after undoing the last apply somaxconn = %s, want 8192", got)
	}
	if rb, err = Rollback(bg, RollbackOptions{StateDir: state}); err != nil || !rb.Archived {
		t.Fatalf("rollback: %+v %v", rb, err)
	}
	requireSame(t, orig, snapshot(t, root), "stacked")
}

func TestRollbackOneSession(t *testing.T) {
	s, root, orig := rehearsal(t)
	state := t.TempDir()
	first, err := Apply(bg, s, &Plan{Version: 1, Changes: []change.Change{{Kind: change.KindSysctl, Target: "net.core.somaxconn", Value: "8192"}}}, ApplyOptions{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(bg, s, &Plan{Version: 1, Changes: []change.Change{{Kind: change.KindSysctl, Target: "vm.overcommit_memory", Value: "1"}}}, ApplyOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	rb, err := Rollback(bg, RollbackOptions{StateDir: state, Session: first.Session})
	if err != nil || rb.Count(StatusRestored) != 1 || rb.Archived {
		t.Fatalf("rollback of the first session: %+v %v", rb, err)
	}
	if readRel(t, root, "proc/sys/net/core/somaxconn") != "4096" || readRel(t, root, "proc/sys/vm/overcommit_memory") != "1" {
		t.Fatal("rolled back the wrong session")
	}
	if _, err := Rollback(bg, RollbackOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	requireSame(t, orig, snapshot(t, root), "one session at a time")
}

// After a reboot the volatile values are back at their boot defaults:
// rollback must not write the old values over whatever the new boot set.
func TestRollbackAfterReboot(t *testing.T) {
	s, root, orig := rehearsal(t)
	state := t.TempDir()
	if _, err := Apply(bg, s, smallPlan(), ApplyOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	// Reboot: boot defaults come back (here: a different somaxconn) and
	// a new boot id.
	for rel, content := range smallHost {
		os.WriteFile(filepath.Join(root, rel), []byte(content), 0o644)
	}
	os.WriteFile(filepath.Join(root, "proc/sys/net/core/somaxconn"), []byte("2048\n"), 0o644)
	os.WriteFile(filepath.Join(root, "proc/sys/kernel/random/boot_id"), []byte("5e1c0a5e-0000-4000-8000-000000000002\n"), 0o644)
	booted := snapshot(t, root)
	st, _ := Journaled(bg, StatusOptions{StateDir: state})
	if !st.Sessions[0].Rebooted {
		t.Error("status did not notice the reboot")
	}
	rb, err := Rollback(bg, RollbackOptions{StateDir: state})
	if err != nil || rb.Count(StatusGone) != len(smallPlan().Changes) || !rb.Archived {
		t.Fatalf("rollback after reboot: %+v %v", rb, err)
	}
	requireSame(t, booted, snapshot(t, root), "rollback after reboot")
	_ = orig
}

func TestTornJournalLine(t *testing.T) {
	s, root, orig := rehearsal(t)
	state := t.TempDir()
	if _, err := Apply(bg, s, smallPlan(), ApplyOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(filepath.Join(state, journalName), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"op":"intent","session":"x","seq":99,"change":{"ki`)
	f.Close()
	if _, err := Rollback(bg, RollbackOptions{StateDir: state}); err != nil {
		t.Fatalf("rollback with a torn last line: %v", err)
	}
	requireSame(t, orig, snapshot(t, root), "torn journal")
}

func TestDamagedJournalLineIsAnError(t *testing.T) {
	s, _, _ := rehearsal(t)
	state := t.TempDir()
	if _, err := Apply(bg, s, smallPlan(), ApplyOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(state, journalName))
	lines := strings.SplitAfter(string(b), "\n")
	lines[2] = "garbage\n"
	os.WriteFile(filepath.Join(state, journalName), []byte(strings.Join(lines, "")), 0o600)
	_, err := Rollback(bg, RollbackOptions{StateDir: state})
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("rollback over a damaged journal: %v", err)
	}
}

func TestUnchangedIsNotJournaled(t *testing.T) {
	s, _, _ := rehearsal(t)
	state := t.TempDir()
	p := &Plan{Version: 1, Changes: []change.Change{
		{Kind: change.KindSysctl, Target: "net.ipv4.ip_local_port_range", Value: "32768 60999"},
		{Kind: change.KindFile, Target: "/sys/kernel/mm/transparent_hugepage/defrag", Value: "madvise"},
		{Kind: change.KindFile, Target: "/proc/irq/24/smp_affinity_list", Value: "0,1,2,3,4,5,6,7"},
		{Kind: change.KindFile, Target: "/sys/class/net/eth0/queues/rx-1/rps_cpus", Value: "0"},
	}}
	res, err := Apply(bg, s, p, ApplyOptions{StateDir: state})
	if err != nil || res.Count(StatusUnchanged) != 4 {
		t.Fatalf("apply of values already in place: %+v %v", res, err)
	}
	if st, _ := Journaled(bg, StatusOptions{StateDir: state}); st.Pending() != 0 {
		t.Errorf("unchanged values were journaled")
	}
	if _, err := os.Stat(filepath.Join(state, journalName)); !os.IsNotExist(err) {
		t.Errorf("an apply that changed nothing left an active journal: %v", err)
	}
}

func TestStateDirInUse(t *testing.T) {
	state := t.TempDir()
	j, err := openJournal(state)
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	s, _, _ := rehearsal(t)
	if _, err := Apply(bg, s, smallPlan(), ApplyOptions{StateDir: state}); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second apply on a locked state dir: %v", err)
	}
}

func TestVerify(t *testing.T) {
	s, _, _ := rehearsal(t)
	p := smallPlan()
	outs, err := Verify(bg, s, p)
	if err != nil {
		t.Fatal(err)
	}
	if byStatus(outs)[StatusMismatch] != len(p.Changes) {
		t.Fatalf("verify before apply: %+v", outs)
	}
	if _, err := Apply(bg, s, p, ApplyOptions{StateDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	outs, _ = Verify(bg, s, p)
	if byStatus(outs)[StatusOK] != len(p.Changes) {
		t.Fatalf("verify after apply: %+v", outs)
	}
}

// Restoring dirty_bytes=0 must write dirty_ratio instead: the kernel
// rejects dirty_bytes=0 (tuned PR #882).
func TestCoupledDirtySysctls(t *testing.T) {
	s, root, orig := rehearsal(t)
	state := t.TempDir()
	p := &Plan{Version: 1, Changes: []change.Change{{Kind: change.KindSysctl, Target: "vm.dirty_bytes", Value: "100000000"}}}
	if _, err := Apply(bg, s, p, ApplyOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	if readRel(t, root, "proc/sys/vm/dirty_ratio") != "0" {
		t.Fatal("the simulated kernel did not zero dirty_ratio")
	}
	if _, err := Rollback(bg, RollbackOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	requireSame(t, orig, snapshot(t, root), "coupled sysctls")
}

// A read-back that fails leaves the value unknown: rollback must still
// restore what the write changed, not call it drift.
func TestReadBackErrorStillRestores(t *testing.T) {
	s, root, orig := rehearsal(t)
	s.FS = &failReadAfterWrite{FS: s.FS, name: "/proc/irq/26/smp_affinity_list"}
	_, err := Apply(bg, s, smallPlan(), ApplyOptions{StateDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("apply: %v", err)
	}
	requireSame(t, orig, snapshot(t, root), "read-back error")
}

// failReadAfterWrite fails the first read of name after its first write.
type failReadAfterWrite struct {
	FS
	name            string
	written, failed bool
}

func (f *failReadAfterWrite) WriteFile(name string, data []byte) error {
	f.written = f.written || name == f.name
	return f.FS.WriteFile(name, data)
}

func (f *failReadAfterWrite) ReadFile(name string) ([]byte, error) {
	if name == f.name && f.written && !f.failed {
		f.failed = true
		return nil, syscall.EBUSY
	}
	return f.FS.ReadFile(name)
}

// Issue 10 item 7: a rehearsal tree on a read-only mount is refused in the
// preview exactly as apply refuses it ("0 refused" then "refused 9" was
// the bug).
func TestPreviewRefusesReadOnlyMount(t *testing.T) {
	testutil.NeedRoot(t) // to bind-mount the tree read-only
	s, root, orig := rehearsal(t)
	ro := filepath.Join(root, "proc/sys")
	if err := unix.Mount(ro, ro, "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Unmount(ro, unix.MNT_DETACH) })
	if err := unix.Mount("", ro, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		t.Fatal(err)
	}
	p := smallPlan()
	pre, err := Preview(bg, s, p)
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	res, err := Apply(bg, s, p, ApplyOptions{StateDir: state})
	if res == nil {
		t.Fatalf("apply: %v", err)
	}
	want := res.Count(StatusRefused)
	if want == 0 || count(pre, StatusRefused) != want {
		t.Errorf("preview refuses %d, apply refuses %d", count(pre, StatusRefused), want)
	}
	for i, o := range pre {
		if (o.Status == StatusRefused) != (res.Outcomes[i].Status == StatusRefused) {
			t.Errorf("%s: preview %s, apply %s", o.Change.Key(), o.Status, res.Outcomes[i].Status)
		}
	}
	if _, err := Rollback(bg, RollbackOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	requireSame(t, orig, snapshot(t, root), "apply and rollback on a partly read-only tree")
}

// Issue 10 item 7: a value put back by hand is one state with one word:
// status and rollback both call it restored (already back at the old
// value), where status used to call it drift.
func TestPutBackByHandIsRestoredInStatusAndRollback(t *testing.T) {
	s, root, orig := rehearsal(t)
	state := t.TempDir()
	p := &Plan{Version: 1, Changes: []change.Change{{Kind: change.KindSysctl, Target: "net.core.somaxconn", Value: "8192"}}}
	if _, err := Apply(bg, s, p, ApplyOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "proc/sys/net/core/somaxconn"), []byte("4096\n"), 0o644)
	st, err := Journaled(bg, StatusOptions{StateDir: state})
	if err != nil || st.Pending() != 1 {
		t.Fatalf("status: %+v %v", st, err)
	}
	line := st.Sessions[0].Changes[0]
	rb, err := Rollback(bg, RollbackOptions{StateDir: state})
	if err != nil || len(rb.Outcomes) != 1 {
		t.Fatalf("rollback: %+v %v", rb, err)
	}
	if line.Status != StatusRestored || rb.Outcomes[0].Status != StatusRestored || line.Reason != rb.Outcomes[0].Reason {
		t.Errorf("status says %s (%s), rollback says %s (%s); want restored in both, in the same words",
			line.Status, line.Reason, rb.Outcomes[0].Status, rb.Outcomes[0].Reason)
	}
	requireSame(t, orig, snapshot(t, root), "put back by hand")
}
