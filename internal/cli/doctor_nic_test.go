package cli

import (
	"strings"
	"testing"

	"redline/internal/testutil"
)

// A /proc/interrupts that does not parse makes the report incomplete: it
// lists the error and doctor exits 2, even though nothing fired.
func TestDoctorParseErrorExitCode(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{"proc/interrupts": "garbage\n", "sys/.keep": ""})
	code, out, errOut := doctorCLI(t, "doctor", "--root", root, "--no-redis")
	if code != ExitError || !strings.Contains(out, "/proc/interrupts") || !strings.Contains(out, "error(s) reading the host") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}

// --iface names a NIC the host must have; --irq-pattern is checked as
// inspect checks it, and maps IRQs the built-in conventions do not.
func TestDoctorIfaceAndIRQPattern(t *testing.T) {
	root := "../../testdata/hosts/realtek-r8125-ifn"
	code, _, errOut := doctorCLI(t, "doctor", "--root", root, "--no-redis", "--iface", "eth9")
	if code != ExitError || !strings.Contains(errOut, `NIC "eth9" is not on host`) || !strings.Contains(errOut, "eth0") {
		t.Errorf("unknown NIC: exit %d, %s", code, errOut)
	}
	// A path is not a NIC name (it would test any file's existence).
	if code, _, errOut := doctorCLI(t, "doctor", "--root", root, "--no-redis", "--iface", "../../../etc"); code != ExitError || !strings.Contains(errOut, "is not a network interface name") {
		t.Errorf("a path as the NIC: exit %d, %s", code, errOut)
	}
	if code, _, errOut := doctorCLI(t, "doctor", "--root", root, "--no-redis", "--irq-pattern", "no-colon"); code != ExitError || !strings.Contains(errOut, "--irq-pattern") {
		t.Errorf("bad pattern: exit %d, %s", code, errOut)
	}
	code, out, errOut := doctorCLI(t, "doctor", "--root", root, "--no-redis", "--iface", "eth0", "--rule", "nic-irq-concentration")
	if code != ExitFailure || !strings.Contains(out, "eth0's 3 queues went to CPU 0") {
		t.Errorf("eth0: exit %d\n%s\n%s", code, out, errOut)
	}
}

// On a tree with two redis-servers, --pid chooses one; a pid the tree does
// not have is an error.
func TestDoctorPidOnTree(t *testing.T) {
	root := "../../testdata/hosts/x86-2socket-mlx5"
	code, out, errOut := doctorCLI(t, "doctor", "--root", root, "--no-redis", "--pid", "40001", "--rule", "irq-redis-overlap")
	if code != ExitFailure || !strings.Contains(out, "pinned within CPUs 20-23") || strings.Contains(out, "31337") {
		t.Errorf("--pid 40001: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut := doctorCLI(t, "doctor", "--root", root, "--no-redis", "--pid", "9"); code != ExitError || !strings.Contains(errOut, "pid 9") {
		t.Errorf("--pid 9: exit %d, %s", code, errOut)
	}
}
