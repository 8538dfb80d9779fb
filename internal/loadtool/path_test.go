package loadtool

import (
	"context"
	"strings"
	"testing"
	"time"

	"redline/internal/testutil"
)

// Issue 24, item 1 held out: a root lab ran redis-benchmark by name from
// root's PATH, so a user's fake first on it ran as root. It now comes
// from root's system directories.
func TestToolNotFromPATH(t *testing.T) {
	testutil.NeedRoot(t)
	dir := testutil.FakesOnPath(t, "redis-benchmark")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	Run(ctx, Request{Tool: "redis-benchmark", Args: []string{"-n", "1"}, Test: "PING_INLINE", Addr: "127.0.0.1:1"})
	testutil.FakeRan(t, dir)
}

// Issue 35, item 4: the tool's output was read whole into memory; a tool
// that prints without end grew redline with it. Past maxOutput the tool
// is stopped and the run fails, naming it. head stands in for a tool that
// prints 64 MiB of zeros.
func TestToolOutputIsBounded(t *testing.T) {
	Tools["head"] = Tool{Name: "head",
		argv:  func(Request, string, string) ([]string, error) { return []string{"-c", "67108864", "/dev/zero"}, nil },
		parse: parseBenchmark}
	defer delete(Tools, "head")
	_, err := Run(context.Background(), Request{Tool: "head", Addr: "127.0.0.1:1"})
	if err == nil || !strings.Contains(err.Error(), "head wrote more than") {
		t.Fatalf("Run = %v; want the output's size refused", err)
	}
}
