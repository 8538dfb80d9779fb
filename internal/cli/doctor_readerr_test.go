package cli

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"redline/internal/testutil"
)

// permTreeEnv hands the child run of TestDoctorPermissionDenied its tree.
const permTreeEnv = "REDLINE_TEST_PERM_TREE"

// nobody is the user the test drops to when it runs as root (root reads
// files whatever their mode).
const nobody = 65534

// A doctor that may not read some files of the host (as a user other than
// root: the numa_maps and smaps_rollup of another user's redis-server,
// here also /proc/interrupts) says not checked, permission denied (run as
// root), for the rules that read them, judges the rest, and exits with
// the findings' code, not 2. The tree is a copy of x86-2socket-mlx5 with
// those files made unreadable (chmod 000); as root the test runs itself
// again as nobody.
func TestDoctorPermissionDenied(t *testing.T) {
	if dir := os.Getenv(permTreeEnv); dir != "" {
		checkPermissionDenied(t, dir)
		return
	}
	dir := testutil.CopyTree(t, "../../testdata/hosts/x86-2socket-mlx5")
	for _, f := range []string{"proc/interrupts", "proc/40001/numa_maps", "proc/40001/smaps_rollup"} {
		if err := os.Chmod(filepath.Join(dir, f), 0); err != nil {
			t.Fatal(err)
		}
	}
	if os.Geteuid() != 0 {
		checkPermissionDenied(t, dir)
		return
	}
	// Root: the test's temporary directories (0700 when made) and a copy
	// of this test binary must be open to nobody.
	for d := dir; strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	base := t.TempDir()
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "cli.test")
	copyFile(t, os.Args[0], bin, 0o755)
	cmd := exec.Command(bin, "-test.run=^TestDoctorPermissionDenied$", "-test.count=1", "-test.v")
	cmd.Dir = base
	cmd.Env = append(os.Environ(), permTreeEnv+"="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as uid %d: %v\n%s", nobody, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestDoctorPermissionDenied") {
		t.Fatalf("the child did not run the test:\n%s", out)
	}
}

func checkPermissionDenied(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.ReadFile(filepath.Join(dir, "proc/interrupts")); err == nil {
		t.Fatal("the unreadable file is readable: running as root?")
	}
	code, out, errOut := doctorCLI(t, "doctor", "--root", dir, "--no-redis", "--verbose",
		"--rule", "nic-irq-concentration", "--rule", "thp-in-redis", "--rule", "nic-numa-locality", "--rule", "cpu-governor")
	if code != ExitFailure {
		t.Errorf("exit %d, want %d (findings, no error)\n%s\n%s", code, ExitFailure, out, errOut)
	}
	for _, want := range []string{
		"nic-irq-concentration    permission denied reading " + dir + "/proc/interrupts (run as root)",
		"thp-in-redis             redis-server pid 40001: permission denied reading " + dir + "/proc/40001/smaps_rollup (run as root)",
		"nic-numa-locality        redis-server pid 40001: permission denied reading " + dir + "/proc/40001/numa_maps (run as root)",
		"3 file(s) refused: permission denied (run as root)",
		"[cpu-governor]", // judged: its files were readable
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "error(s) reading the host") {
		t.Errorf("a refusal reported as an error:\n%s", out)
	}
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// A host value that does not parse is an error in the report and in the
// exit code, wherever it is parsed: here a sysctl, which the host keeps
// as text and the rule parses.
func TestDoctorSysctlParseErrorExitCode(t *testing.T) {
	dir := testutil.CopyTree(t, "../../testdata/hosts/x86-2socket-mlx5")
	if err := os.WriteFile(filepath.Join(dir, "proc/sys/net/core/somaxconn"), []byte("lots\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := doctorCLI(t, "doctor", "--root", dir, "--no-redis", "--pid", "31337", "--rule", "somaxconn")
	if code != ExitError || !strings.Contains(out, `could not parse /proc/sys/net/core/somaxconn:1: "lots"`) || !strings.Contains(out, "1 errors") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// partlyRefusedEnv hands the child run of TestDoctorPartlyRefusedServers
// its tree.
const partlyRefusedEnv = "REDLINE_TEST_PARTLY_REFUSED_TREE"

// Two redis-servers, each partly refused (as a user other than root, on
// a copy of x86-2socket-mlx5): pid 31337's /proc/31337/task is refused
// entirely, pid 40001's main thread status (its affinity). The first is a
// permission error naming the pid, not a silent absence; the placement
// fixes of the nic-irq rules say which servers they could not see and
// that the CPUs they propose may overlap them.
func TestDoctorPartlyRefusedServers(t *testing.T) {
	if dir := os.Getenv(partlyRefusedEnv); dir != "" {
		checkPartlyRefused(t, dir)
		return
	}
	dir := testutil.CopyTree(t, "../../testdata/hosts/x86-2socket-mlx5")
	for _, f := range []string{"proc/31337/task", "proc/40001/task/40001/status"} {
		if err := os.Chmod(filepath.Join(dir, f), 0); err != nil {
			t.Fatal(err)
		}
	}
	if os.Geteuid() != 0 {
		checkPartlyRefused(t, dir)
		return
	}
	runAsNobody(t, dir, partlyRefusedEnv, "TestDoctorPartlyRefusedServers")
}

func checkPartlyRefused(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.ReadDir(filepath.Join(dir, "proc/31337/task")); err == nil {
		t.Fatal("the unreadable directory is readable: running as root?")
	}
	code, out, errOut := doctorCLI(t, "doctor", "--root", dir, "--no-redis", "--json", "--rule", "nic-irq-affinity")
	if code == ExitError {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Errors []struct {
			Source, Error, Kind string
		} `json:"read_errors"`
		Findings []struct {
			Status string
			Fix    struct{ Advice []string }
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Findings) != 1 {
		t.Fatalf("%v: %s", err, out)
	}
	found := false
	for _, e := range rep.Errors {
		if e.Kind == "permission" && strings.Contains(e.Error, "redis-server pid 31337: ") && strings.Contains(e.Error, "/proc/31337/task") {
			found = true
		}
	}
	if !found {
		t.Errorf("no permission error naming pid 31337: %+v", rep.Errors)
	}
	advice := strings.Join(rep.Findings[0].Fix.Advice, "\n")
	for _, want := range []string{
		"could not see redis-server pid 31337",
		"could not read where redis-server pid 40001 may run (/proc/40001/task/40001/status refused): the CPUs proposed may overlap its threads",
	} {
		if !strings.Contains(advice, want) {
			t.Errorf("fix advice lacks %q:\n%s\n%s", want, advice, out)
		}
	}
}

// runAsNobody runs the test name again as uid nobody, on dir (handed
// through env): root reads files whatever their mode.
func runAsNobody(t *testing.T, dir, env, name string) {
	t.Helper()
	for d := dir; strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	base := t.TempDir()
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "cli.test")
	copyFile(t, os.Args[0], bin, 0o755)
	cmd := exec.Command(bin, "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Dir = base
	cmd.Env = append(os.Environ(), env+"="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as uid %d: %v\n%s", nobody, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("the child did not run the test:\n%s", out)
	}
}
