// Package ansible_test runs the redline.redis_host collection with
// ansible-core against three hosts played by sshd in network namespaces,
// plus one that is unreachable. The collection itself is the YAML and
// Python beside this file; ansible-galaxy leaves this file out of it
// (galaxy.yml build_ignore).
package ansible_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"redline/internal/netns"
	"redline/internal/testutil"
	"redline/internal/testutil/sshtest"
)

// sysctls are the plan's changes: network sysctls, which each network
// namespace has its own copy of, so the three hosts (which share this
// machine's kernel) really hold different values.
var sysctls = []string{"net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog"}

const planned = "8192"

type fleet struct {
	t        *testing.T
	work     string
	bin      string
	hosts    []*sshtest.Hosts
	names    []string
	original map[string][]string // host name -> the sysctls' values before
	env      []string
}

func TestCollectionFleet(t *testing.T) {
	t.Parallel() // ansible in processes of its own: the three overlap
	testutil.NeedRoot(t)
	testutil.Need(t, "ansible-playbook", "ansible-galaxy", "python3")
	f := newFleet(t)

	// Install: the binary lands on every reachable host, checksummed; the
	// unreachable host fails alone and the summary says so.
	out := f.play("install.yml", "-e", "redline_binary_src="+f.bin, "-e", "redline_binary_sha256="+sha256File(t, f.bin))
	f.recap(out, 1)
	for _, n := range f.names {
		if sha256File(t, f.hostBin(n)) != sha256File(t, f.bin) {
			t.Fatalf("%s: installed binary differs", n)
		}
	}
	f.recap(f.play("install.yml", "-e", "redline_binary_src="+f.bin, "-e", "redline_binary_sha256="+sha256File(t, f.bin)), 0)

	// Check mode: a preview with a diff per change, nothing written.
	out = f.play("tune.yml", "-e", "redline_action=apply", "--check", "--diff")
	f.recap(out, 1)
	f.expectValues(f.original)
	for i, n := range f.names {
		if !strings.Contains(out, "sysctl net.core.somaxconn = "+f.original[n][0]) || !strings.Contains(out, "+sysctl net.core.somaxconn = "+planned) {
			t.Errorf("check mode on %s: no diff %s -> %s in:\n%s", n, f.original[n][0], planned, out)
		}
		if _, err := os.Stat(f.stateDir(n)); err == nil {
			t.Errorf("check mode on host %d made its journal", i+1)
		}
	}

	// Apply, then apply again: changed, then ok.
	f.recap(f.play("tune.yml", "-e", "redline_action=apply"), 1)
	f.expectValues(f.all(planned))
	f.recap(f.play("tune.yml", "-e", "redline_action=apply"), 0)

	// Drift behind the collection's back on one host: verify says which,
	// the fleet report (doctor and verify merged by host) shows it.
	f.sysctl(1, "net.core.somaxconn", "5555")
	results := filepath.Join(f.work, "results")
	f.recap(f.play("doctor.yml", "-e", "redline_results_dir="+results, "-e", `{"redline_doctor_args": ["--no-redis", "--rule", "somaxconn"]}`), 0)
	out = f.play("tune.yml", "-e", "redline_action=verify", "-e", "redline_results_dir="+results, "-e", "redline_controller_bin="+f.bin)
	f.recap(out, 0)
	for i, n := range f.names {
		row := regexp.MustCompile(`\| ` + n + ` \| [^|]+ \| \d+ \| (\d+/\d+) \| ([^|]*)\|`).FindStringSubmatch(out)
		switch {
		case row == nil:
			t.Errorf("no fleet row for %s in:\n%s", n, out)
		case i == 1 && (row[1] != "1/2" || !strings.Contains(row[2], "sysctl net.core.somaxconn: 5555 (plan 8192)")):
			t.Errorf("drifted host %s: %q", n, row[0])
		case i != 1 && (row[1] != "2/2" || strings.TrimSpace(row[2]) != ""):
			t.Errorf("host %s in place: %q", n, row[0])
		}
	}
	if !strings.Contains(out, "1 drifted from the plan") {
		t.Errorf("the fleet table does not count one drifted host:\n%s", out)
	}

	// Rollback, after the operator put the drifted value back: every host
	// has its own values again; a second rollback has nothing to do.
	f.sysctl(1, "net.core.somaxconn", planned)
	out = f.play("tune.yml", "-e", "redline_action=rollback")
	f.recap(out, 1)
	f.expectValues(f.original)
	if !strings.Contains(out, "restored sysctl net.ipv4.tcp_max_syn_backlog = "+f.original[f.names[0]][1]) {
		t.Errorf("rollback does not say what it restored:\n%s", out)
	}
	f.recap(f.play("tune.yml", "-e", "redline_action=rollback"), 0)
}

func newFleet(t *testing.T) *fleet {
	f := &fleet{t: t, work: t.TempDir(), original: map[string][]string{}}
	f.bin = filepath.Join(f.work, "redline")
	build := exec.Command("go", "build", "-o", f.bin, "./cmd/redline")
	build.Dir, build.Env = "..", append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	coll := filepath.Join(f.work, "collections")
	if out, err := exec.Command("ansible-galaxy", "collection", "install", ".", "-p", coll).CombinedOutput(); err != nil {
		t.Fatalf("ansible-galaxy collection install: %v\n%s", err, out)
	}
	f.hosts = sshtest.NewFleet(t, 3)
	var known []string
	for i, h := range f.hosts {
		n := "h" + strconv.Itoa(i+1)
		f.names = append(f.names, n)
		for j, s := range sysctls {
			v := strconv.Itoa(1000 + 100*j + i + 1) // 1001, 1002, 1003; 1101, ...
			f.sysctl(i, s, v)
			f.original[n] = append(f.original[n], v)
		}
		known = append(known, h.KnownHostsLine(t))
		if err := os.MkdirAll(filepath.Dir(f.hostBin(n)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(f.work, "known_hosts"), strings.Join(known, ""))
	write(t, filepath.Join(f.work, "plan.yaml"), "version: 1\nchanges:\n"+
		"  - {kind: sysctl, target: "+sysctls[0]+", value: \""+planned+"\", why: fleet test}\n"+
		"  - {kind: sysctl, target: "+sysctls[1]+", value: \""+planned+"\", why: fleet test}\n")
	write(t, filepath.Join(f.work, "inventory.yml"), f.inventory())
	for _, d := range []string{"ansible-tmp", "ansible-home", "remote-tmp"} {
		if err := os.Mkdir(filepath.Join(f.work, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	f.env = append(os.Environ(),
		"ANSIBLE_COLLECTIONS_PATH="+coll,
		"ANSIBLE_HOME="+filepath.Join(f.work, "ansible-home"),
		"ANSIBLE_LOCAL_TEMP="+filepath.Join(f.work, "ansible-tmp"),
		"ANSIBLE_SSH_ARGS=-o ControlMaster=no -o ControlPath=none", // no master left running after the test
		"ANSIBLE_PIPELINING=True", "ANSIBLE_NOCOLOR=1", "ANSIBLE_RETRY_FILES_ENABLED=False",
		"ANSIBLE_TIMEOUT=20", "ANSIBLE_FORKS=4", "ANSIBLE_GATHERING=explicit",
		"ANSIBLE_SSH_TRANSFER_METHOD=piped") // the test sshd has no sftp subsystem
	return f
}

// inventory has the three hosts and "gone": sshd's address with a port
// nothing listens on, refused at once.
func (f *fleet) inventory() string {
	var b strings.Builder
	b.WriteString("redis:\n  hosts:\n")
	for i, h := range f.hosts {
		n := f.names[i]
		fmt.Fprintf(&b, "    %s: {ansible_host: %s, ansible_ssh_private_key_file: %s, redline_bin: %s, redline_state_dir: %s}\n",
			n, h.Pair.ServerIP, h.UserKey(), f.hostBin(n), f.stateDir(n))
	}
	fmt.Fprintf(&b, "    gone: {ansible_host: %s, ansible_port: %d, ansible_ssh_private_key_file: %s, redline_bin: /nonexistent, redline_state_dir: /nonexistent}\n",
		f.hosts[0].Pair.ServerIP, sshtest.Port+1, f.hosts[0].UserKey())
	fmt.Fprintf(&b, `  vars:
    ansible_port: %d
    ansible_user: root
    ansible_python_interpreter: /usr/bin/python3
    ansible_remote_tmp: %s
    ansible_ssh_common_args: "-F /dev/null -o UserKnownHostsFile=%s -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes -o IdentityAgent=none"
    redline_become: false
    redline_plan_src: %s
`, sshtest.Port, filepath.Join(f.work, "remote-tmp"), filepath.Join(f.work, "known_hosts"), filepath.Join(f.work, "plan.yaml"))
	return b.String()
}

func (f *fleet) hostBin(n string) string  { return filepath.Join(f.work, n, "bin", "redline") }
func (f *fleet) stateDir(n string) string { return filepath.Join(f.work, n, "state") }

// play runs one of the collection's playbooks from the controller
// namespace and returns its output.
func (f *fleet) play(playbook string, args ...string) string {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	argv := append([]string{"netns", "exec", f.hosts[0].Pair.Client, "ansible-playbook", "-i", filepath.Join(f.work, "inventory.yml"),
		"redline.redis_host." + strings.TrimSuffix(playbook, ".yml")}, args...)
	cmd := exec.CommandContext(ctx, "ip", argv...)
	cmd.Dir, cmd.Env = f.work, f.env
	// At the deadline, ansible-playbook goes with its forks and their ssh.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	b, err := cmd.CombinedOutput()
	out := string(b)
	f.t.Logf("ansible-playbook %s %s: %v\n%s", playbook, strings.Join(args, " "), err, out)
	if ctx.Err() != nil {
		f.t.Fatalf("ansible-playbook %s: no end within the deadline", playbook)
	}
	return out
}

var recapLine = regexp.MustCompile(`(?m)^(\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)`)

// recap checks the play recap: every real host ok with changed=changed
// (at most that, per task, for the summary's own tasks: they change
// nothing), and "gone" unreachable, and the summary names it alone.
func (f *fleet) recap(out string, changed int) {
	f.t.Helper()
	seen := map[string][]string{}
	for _, m := range recapLine.FindAllStringSubmatch(out, -1) {
		seen[m[1]] = m[2:]
	}
	for _, n := range f.names {
		r := seen[n]
		switch {
		case r == nil:
			f.t.Fatalf("%s not in the play recap:\n%s", n, out)
		case r[2] != "0" || r[3] != "0":
			f.t.Fatalf("%s unreachable=%s failed=%s:\n%s", n, r[2], r[3], out)
		case (changed == 0) != (r[1] == "0"):
			f.t.Fatalf("%s changed=%s, want %s:\n%s", n, r[1], map[bool]string{true: "0", false: "above 0"}[changed == 0], out)
		}
	}
	if r := seen["gone"]; r == nil || r[2] != "1" {
		f.t.Fatalf("the unreachable host is not reported unreachable:\n%s", out)
	}
	if !strings.Contains(out, "3 of 4 hosts done; failed or unreachable: gone") {
		f.t.Fatalf("the summary does not name the unreachable host alone:\n%s", out)
	}
}

func (f *fleet) all(v string) map[string][]string {
	m := map[string][]string{}
	for _, n := range f.names {
		m[n] = []string{v, v}
	}
	return m
}

func (f *fleet) expectValues(want map[string][]string) {
	f.t.Helper()
	for i, n := range f.names {
		for j, s := range sysctls {
			if got := f.hosts[i].ReadServerFile(f.t, "/proc/sys/"+strings.ReplaceAll(s, ".", "/")); got != want[n][j] {
				f.t.Errorf("%s %s = %s, want %s", n, s, got, want[n][j])
			}
		}
	}
}

// sysctl sets a value in host i's namespace behind the collection's back.
func (f *fleet) sysctl(i int, name, value string) {
	f.t.Helper()
	err := netns.Do(f.hosts[i].Pair.Server, func() error {
		return os.WriteFile("/proc/sys/"+strings.ReplaceAll(name, ".", "/"), []byte(value), 0o644)
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
