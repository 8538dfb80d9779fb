package doctor

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"redline/internal/host"
	"redline/internal/testutil"
)

// promReport has a finding in every state, one rule judged per pid and
// one per cluster node, a read error, and a host name to escape.
func promReport() *Report {
	return &Report{
		Findings: []Finding{
			{ID: "tcp-somaxconn", Section: "network", Severity: High, Status: Fired},
			{ID: "thp-enabled", Section: "memory", Severity: Medium, Status: OK},
			{ID: "numa-balancing", Section: "numa-cpu", Severity: Low, Status: NotApplicable},
			{ID: "maxclients", Section: "redis", Severity: Medium, Status: NotChecked},
			{ID: "cgroup-cpu-throttle", Section: "numa-cpu", Severity: Medium, Status: Fired, Pid: 4242},
			{ID: "cgroup-cpu-throttle", Section: "numa-cpu", Severity: Medium, Status: OK, Pid: 17},
			{ID: "appendfsync-always", Section: "redis", Severity: Medium, Status: Fired, Node: "10.0.0.2:7001"},
			{ID: "busy-poll", Section: "network", Severity: Info, Status: Errored},
		},
		ReadErrors: []host.SourceError{{Source: "interrupts", Path: "/proc/interrupts", Error: "bad line"}},
	}
}

func TestWritePrometheusGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WritePrometheus(&b, promReport(), PromOptions{Host: `web"1\a`, Now: time.Unix(1700000000, 0)}); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("testdata", "doctor.prom"), b.Bytes())
	promtoolCheck(t, b.Bytes())
}

// TestWritePrometheusNoHost leaves the host label and the timestamp out.
func TestWritePrometheusNoHost(t *testing.T) {
	var b bytes.Buffer
	if err := WritePrometheus(&b, &Report{}, PromOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "host=") || strings.Contains(b.String(), "timestamp") || !strings.Contains(b.String(), "\nredline_doctor_errors 0\n") {
		t.Errorf("without a host or time:\n%s", b.String())
	}
	promtoolCheck(t, b.Bytes())
}

// promtoolCheck runs promtool check metrics (Debian's prometheus package)
// on a textfile: the exposition format's own linter.
func promtoolCheck(t *testing.T, text []byte) {
	t.Helper()
	testutil.Need(t, "promtool")
	cmd := exec.Command("promtool", "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestExampleAlertRules checks the example rule file and runs its unit
// tests against series shaped as WritePrometheus writes them.
func TestExampleAlertRules(t *testing.T) {
	testutil.Need(t, "promtool")
	dir := filepath.Join("..", "..", "examples", "prometheus")
	for _, args := range [][]string{{"check", "rules", "redline-alerts.yml"}, {"test", "rules", "redline-alerts_test.yml"}} {
		cmd := exec.Command("promtool", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
