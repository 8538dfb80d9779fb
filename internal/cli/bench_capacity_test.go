package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/benchdata"
	"redline/internal/redistest"
)

// TestBenchSLOEndToEnd runs a capacity search against a real
// redis-server: the answer and the curve on stdout, the steps on
// stderr, all of it in -o JSON. The target is loose and no figure is
// asserted (the machine may be loaded); a search that finds nothing
// must still say so and save its curve.
func TestBenchSLOEndToEnd(t *testing.T) {
	s := redistest.Start(t)
	out := filepath.Join(t.TempDir(), "cap.json")
	stdout, stderr, code := runCLI(t, context.Background(), nil, "bench", "-p", port(s), "-t", "get", "-r", "1000", "-c", "10",
		"--slo", "p90=200ms", "--slo-budget", "8s", "--slo-step", "300ms", "--slo-warmup", "100ms", "--progress", "plain", "-o", out)
	doc, err := benchdata.ReadDocument(out)
	if err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", code, err, stdout, stderr)
	}
	if len(doc.Results) != 1 || doc.Results[0].Capacity == nil {
		t.Fatalf("results %+v", doc.Results)
	}
	c := doc.Results[0].Capacity
	if len(c.Curve) == 0 || c.Steps != len(c.Curve) || c.Curve[0].Histogram == nil || c.ProbeRPS <= 0 {
		t.Fatalf("curve of %d steps (steps %d), probe %.0f", len(c.Curve), c.Steps, c.ProbeRPS)
	}
	if !strings.Contains(stdout, "====== GET: capacity at p90 <= 200ms ======") || !strings.Contains(stdout, "offered/s") ||
		!strings.Contains(stderr, "GET: step 1: offered") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if c.Found != (code == 0) || c.Seconds > 8+5 {
		t.Errorf("found %v, exit %d, %.1f s of an 8 s budget", c.Found, code, c.Seconds)
	}
}

// TestBenchSLOUsage: what a search cannot do is refused with exit 2 and
// the flag named.
func TestBenchSLOUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--slo", "p99"}, "p99=1ms"},
		{[]string{"--slo", "p99=1ms", "--rate", "1000"}, "leave --rate out"},
		{[]string{"--slo", "p99=1ms", "--duration", "5s"}, "--slo-step"},
		{[]string{"--slo", "p99=1ms", "-k", "0"}, "-k 0"},
		{[]string{"--slo", "p99=1ms", "--slo-range", "5:1"}, "LOW:HIGH"},
		{[]string{"--slo", "p99=1ms", "--slo-budget", "100ms"}, "shorter than one step"},
	} {
		args := append([]string{"bench", "-p", "1", "--progress", "none"}, c.args...)
		_, stderr, code := runCLI(t, context.Background(), nil, args...)
		if code != ExitError || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}
