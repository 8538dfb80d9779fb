package bench

import (
	"context"
	"strings"
	"syscall"
	"testing"

	"redline/internal/redistest"
)

func TestFileLimitPlan(t *testing.T) {
	const open, loops = 10, 2 // + 4 for the loops + 16 spare = 30 besides the connections
	cases := []struct {
		name     string
		clients  int
		lim      syscall.Rlimit
		want     syscall.Rlimit
		wantErr  string
		possible string
	}{
		{"fits", 100, syscall.Rlimit{Cur: 1024, Max: 4096}, syscall.Rlimit{Cur: 1024, Max: 4096}, "", ""},
		{"exactly fits", 994, syscall.Rlimit{Cur: 1024, Max: 1024}, syscall.Rlimit{Cur: 1024, Max: 1024}, "", ""},
		{"soft raised to what is needed", 2000, syscall.Rlimit{Cur: 1024, Max: 524288}, syscall.Rlimit{Cur: 2030, Max: 524288}, "", ""},
		{"hard raised too (needs privilege)", 5000, syscall.Rlimit{Cur: 1024, Max: 4096}, syscall.Rlimit{Cur: 5030, Max: 5030}, "", ""},
		{"beyond the kernel's ceiling", 1 << 30, syscall.Rlimit{Cur: 1024, Max: 4096}, syscall.Rlimit{Cur: 1024, Max: 4096}, "the open-files limit is 4096", "at most 4066 connections are possible"},
	}
	for _, c := range cases {
		got, err := fileLimitPlan(open, c.clients, loops, c.lim)
		if got != c.want {
			t.Errorf("%s: plan %+v, want %+v", c.name, got, c.want)
		}
		if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), c.possible)) {
			t.Errorf("%s: err = %v, want %q and %q", c.name, err, c.wantErr, c.possible)
		}
	}
}

// TestRunRaisesSoftFileLimit: -c above the soft open-files limit raises it
// (up to the hard limit) before connecting, instead of failing half-way
// with EMFILE.
func TestRunRaisesSoftFileLimit(t *testing.T) {
	s := redistest.Start(t)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	const clients = 300
	low := uint64(openFiles() + 50)
	if lim.Max < low+clients+100 {
		t.Skipf("hard open-files limit %d too low for the test", lim.Max)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: low, Max: lim.Max}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) })
	o := testOptions(s)
	o.Clients, o.Requests = clients, 3000
	tests, _ := SuiteTests([]string{"ping_mbulk"}, false)
	sum, err := Run(context.Background(), o, tests[0], nil)
	if err != nil || sum.Requests != 3000 {
		t.Fatalf("-c %d with a soft limit of %d: %v", clients, low, err)
	}
}
