package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"redline/internal/host"
)

var inspectHosts = filepath.Join("..", "..", "testdata", "hosts")

// readHost reads a fixture tree through the library, as the command should.
func readHost(t *testing.T, root string, opts host.Options) *host.Snapshot {
	t.Helper()
	fs, err := host.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	s, err := host.Read(fs, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var cpusetEqual = cmp.Options{cmp.Comparer(func(a, b host.CPUSet) bool { return a.Equal(b) }), cmpopts.EquateEmpty()}

func TestInspectSummaryOfFixture(t *testing.T) {
	root := filepath.Join(inspectHosts, "kunpeng920-4node-hinic")
	out, errOut, code := runCLI(t, context.Background(), nil, "inspect", "--root", root)
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var want bytes.Buffer
	if err := host.WriteSummary(&want, readHost(t, root, host.Options{})); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.String(), out); diff != "" {
		t.Errorf("inspect output differs from host.WriteSummary (-want +got):\n%s", diff)
	}
	for _, s := range []string{"NIC enp25s0  hinic, 0000:19:00.0, NUMA node 1", "rx/tx-31  105  enp25s0_qp31", "<- off node 1", "24 of 32 queue IRQs are delivered outside node 1", "Redis pid 4242"} {
		if !strings.Contains(out, s) {
			t.Errorf("summary lacks %q", s)
		}
	}
}

func TestInspectJSON(t *testing.T) {
	root := filepath.Join(inspectHosts, "x86-2socket-mlx5")
	out, _, code := runCLI(t, context.Background(), nil, "inspect", "--json", "--root", root, "--port", "16379", "--irq-pattern", "REGEXP:VAR_ETH-q-VAR_QUEUE")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	var got host.Snapshot
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json is not a Snapshot: %v", err)
	}
	want := readHost(t, root, host.Options{Ports: []int{6379, 16379}, IRQPatterns: []string{"REGEXP:VAR_ETH-q-VAR_QUEUE"}})
	if diff := cmp.Diff(want, &got, cpusetEqual); diff != "" {
		t.Errorf("--json differs from host.Read (-want +got):\n%s", diff)
	}
	if len(got.Net.TCP.Ports) != 2 || got.Net.TCP.Ports[1].Port != 16379 {
		t.Errorf("--port not counted: %+v", got.Net.TCP.Ports)
	}
}

// --procfs and --sysfs place /proc and /sys apart from --root.
func TestInspectProcfsSysfs(t *testing.T) {
	tree := filepath.Join(inspectHosts, "kvm-virtio-multiqueue")
	empty := t.TempDir()
	out, errOut, code := runCLI(t, context.Background(), nil, "inspect", "--json", "--root", empty,
		"--procfs", filepath.Join(tree, "proc"), "--sysfs", filepath.Join(tree, "sys"), "--pid", "812")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got host.Snapshot
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Source.Proc == "" || got.Source.Sys == "" || len(got.Processes) != 1 || got.NIC("eth0") == nil || len(got.NIC("eth0").QueueIRQs) != 16 {
		t.Errorf("source %+v, %d processes", got.Source, len(got.Processes))
	}
	// /etc and ethtool/ are under --root, which is empty here.
	if got.NIC("eth0").Ethtool != nil || got.Irqbalance.ConfigPath != "" {
		t.Error("files below --root were read from the procfs tree")
	}
}

// --capture writes a tree that reads back into the same snapshot.
func TestInspectCapture(t *testing.T) {
	root := filepath.Join(inspectHosts, "kvm-virtio-multiqueue")
	dir := filepath.Join(t.TempDir(), "cap")
	_, errOut, code := runCLI(t, context.Background(), nil, "inspect", "--root", root, "--capture", dir)
	if code != ExitOK || !strings.Contains(errOut, "captured") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	src, err := os.ReadFile(filepath.Join(dir, "SOURCE"))
	if err != nil || !strings.Contains(string(src), "redline inspect --capture") {
		t.Errorf("SOURCE: %q %v", src, err)
	}
	orig, again := readHost(t, root, host.Options{}), readHost(t, dir, host.Options{})
	orig.Source, again.Source = host.Source{}, host.Source{}
	if diff := cmp.Diff(orig, again, cpusetEqual); diff != "" {
		t.Errorf("captured tree reads differently (-original +capture):\n%s", diff)
	}
	// A second capture into the same place is refused, before reading
	// (issue 40: every output is checked first, exit 2).
	_, errOut, code = runCLI(t, context.Background(), nil, "inspect", "--root", root, "--capture", dir)
	if code != ExitError || !strings.Contains(errOut, "not empty") {
		t.Errorf("capture into a non-empty dir: exit %d, %q", code, errOut)
	}
}

func TestInspectBadInput(t *testing.T) {
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--root", "/nonexistent/dir"}, ExitError, "not readable"},
		{[]string{"--irq-pattern", "VAR_ETH_qpVAR_QUEUE"}, ExitError, "REGEXP:"},
		{[]string{"--pid", "-3"}, ExitError, "positive"},
		{[]string{"--port", "70000"}, ExitError, "1-65535"},
		{[]string{"--bogus"}, ExitError, "unknown flag"},
		{[]string{"extra"}, ExitError, "unexpected argument"},
	}
	for _, tt := range tests {
		_, errOut, code := runCLI(t, context.Background(), nil, append([]string{"inspect"}, tt.args...)...)
		if code != tt.code || !strings.Contains(errOut, tt.msg) {
			t.Errorf("inspect %v: exit %d, stderr %q; want exit %d mentioning %q", tt.args, code, errOut, tt.code, tt.msg)
		}
	}
}

func TestInspectLive(t *testing.T) {
	out, errOut, code := runCLI(t, context.Background(), nil, "inspect", "--no-processes")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, s := range []string{"Host ", "CPUs ", "Settings"} {
		if !strings.Contains(out, s) {
			t.Errorf("live summary lacks %q:\n%s", s, out)
		}
	}
}
