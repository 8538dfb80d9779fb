package cli

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"redline/internal/redisserver"
	"redline/internal/redistest"
	"redline/internal/testutil"
)

// With ten redis-servers on the host, the default report puts its findings
// first, lists the servers' addresses and what was judged of them, counts
// the skipped rules in one line, and stays under 40 lines (issue 25).
// The doctor and the ten servers run in a network namespace of the
// test's own (ip netns exec, which also mounts that namespace's sysfs, so
// the doctor's view of the NICs is one), so the default address,
// 127.0.0.1:6379, is nobody's there: on this host a user's own Redis may
// hold it, and the doctor would judge that one. Servers in other
// namespaces (other tests', a user's) are the machine's: however many
// there are, the brief report counts them beyond a few.
func TestDoctorTenServersBrief(t *testing.T) {
	testutil.Heavy(t)
	testutil.NeedRoot(t)
	testutil.NeedTools(t, "ip")
	ns := "rl-doctor10-" + strconv.Itoa(os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "delete", ns).Run() })
	if out, err := exec.Command("ip", "-n", ns, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v: %s", err, out)
	}
	var ports []string
	for i := 0; i < 10; i++ {
		ports = append(ports, strconv.Itoa(redistest.StartWith(t, redisserver.Options{NetNS: ns}).Port))
	}
	cmd := exec.Command("ip", "netns", "exec", ns, os.Args[0], "doctor")
	cmd.Env = append(os.Environ(), "REDLINE_TEST_MAIN=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run() // the exit code says what fired
	out, errOut := stdout.String(), stderr.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) >= 40 {
		t.Errorf("%d lines, want under 40:\n%s", len(lines), out)
	}
	servers := strings.Index(out, "\nRedis servers found (")
	if servers < 0 {
		t.Fatalf("no list of servers:\n%s\n%s", out, errOut)
	}
	for _, sev := range []string{"\nHIGH (", "\nMEDIUM (", "\nLOW (", "\nINFO ("} {
		if i := strings.Index(out, sev); i > servers {
			t.Errorf("%s after the servers: findings come first:\n%s", strings.TrimSpace(sev), out)
		}
	}
	for _, p := range ports {
		if !strings.Contains(out[servers:], ":"+p) {
			t.Errorf("port %s not listed:\n%s", p, out)
		}
	}
	if strings.Count(out, "not checked") == 0 || strings.Contains(out, "\nNot checked (") {
		t.Errorf("want one count line for the rules not checked, not a list:\n%s", out)
	}
}
