package cli

import (
	"context"
	"path/filepath"
	"testing"

	"redline/internal/benchdata"
	"redline/internal/redistest"
)

// TestBenchWorkersMerge runs one test in two worker processes (this test
// binary, as redline, through TestMain) and checks the merge: exactly -n
// requests on the server, two worker lines, and a merged histogram holding
// every request.
func TestBenchWorkersMerge(t *testing.T) {
	s := redistest.Start(t)
	t.Setenv("REDLINE_TEST_MAIN", "1")
	out := filepath.Join(t.TempDir(), "w.json")
	stdout, errOut, code := runCLI(t, context.Background(), nil, "bench", "--workers", "2", "-p", port(s), "-t", "set",
		"-c", "5", "-n", "3001", "-r", "1000", "-q", "--progress", "none", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	if got := commandCalls(t, s)["set"]; got != 3001 {
		t.Errorf("server saw %d SET calls, want 3001", got)
	}
	doc, err := benchdata.ReadDocument(out)
	if err != nil {
		t.Fatal(err)
	}
	sum := doc.Results[0]
	if sum.Requests != 3001 || sum.Histogram.TotalCount() != 3001 || len(sum.Workers) != 2 || sum.Config.Clients != 5 {
		t.Fatalf("merged %d requests (histogram %d), %d workers, %d clients", sum.Requests, sum.Histogram.TotalCount(), len(sum.Workers), sum.Config.Clients)
	}
	if sum.Workers[0].Requests+sum.Workers[1].Requests != 3001 || sum.Workers[0].Clients != 3 {
		t.Errorf("worker shares %+v", sum.Workers)
	}
	t.Log(stdout)
}

func TestBenchWorkersUsage(t *testing.T) {
	_, errOut, code := runCLI(t, context.Background(), nil, "bench", "--workers", "4", "-c", "2", "-t", "set")
	if code != 2 {
		t.Errorf("exit %d (%s), want 2 for fewer clients than workers", code, errOut)
	}
}
