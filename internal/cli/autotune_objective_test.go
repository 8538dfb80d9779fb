package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/testutil"
)

// TestAutotuneObjectivesEndToEnd: short real sessions on a managed
// redis-server with one neutral knob, one per objective: p99 at a fixed
// offered rate (--rate in the workload), and throughput bounded by a p99
// (--p99-max). Each runs to its end, states its objective in the output
// and the report, and writes report.md and report.html.
func TestAutotuneObjectivesEndToEnd(t *testing.T) {
	t.Parallel() // waits on its own servers (or builds)
	testutil.Heavy(t)
	for _, c := range []struct {
		name  string
		args  []string
		state string
	}{
		{"p99 at a rate", []string{"--objective", "p99", "--workload", "-t set -c 4 --rate 2000 --duration 200ms --warmup 50ms"}, "objective: p99 latency"},
		{"throughput bounded", []string{"--p99-max", "1s", "--workload", "-t set -c 4 -P 4 --duration 200ms --warmup 50ms"}, "throughput subject to p99 ≤ 1s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "at")
			args := append([]string{"autotune", "--dir", dir, "--seed", "3", "--knob", "redis.slowlog-max-len", "--max-rounds", "12"}, c.args...)
			stdout, stderr, code := runCLI(t, context.Background(), nil, args...)
			if code != ExitOK && code != ExitFailure || strings.Contains(stderr, "trial of") {
				t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
			}
			want := strings.TrimPrefix(c.state, "objective: ")
			if !strings.Contains(stdout, "autotune: "+want) {
				t.Errorf("the output does not state the objective %q:\n%s", want, stdout)
			}
			res := readAutotuneResult(t, dir)
			if res.Noise.Rounds == 0 || len(res.Trials) != 1 {
				t.Errorf("noise %d rounds, %d comparisons; want the noise and one comparison", res.Noise.Rounds, len(res.Trials))
			}
			for _, f := range []string{"report.md", "report.html"} {
				b, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil || !strings.Contains(string(b), want) || !strings.Contains(string(b), "redis.slowlog-max-len = 1024") {
					t.Errorf("%s does not state the objective or the comparison (%v)", f, err)
				}
			}
		})
	}
}
