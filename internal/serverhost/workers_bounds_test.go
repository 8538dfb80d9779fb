package serverhost

import (
	"strings"
	"testing"
	"time"

	"redline/internal/bench"
)

// Issue 24, item 13: a client's worker spec was unbounded: a session
// would open as many connections, buffer as much data and load for as
// long as it asked.
func TestWorkerSpecBounds(t *testing.T) {
	ok := func() *bench.WorkerSpec {
		o := bench.DefaultOptions()
		o.Addr, o.Clients, o.Requests = "127.0.0.1:6379", 10, 100
		return &bench.WorkerSpec{Options: o}
	}
	if err := checkWorkerSpec(ok(), false); err != nil {
		t.Fatalf("a modest spec: %v", err)
	}
	for what, mod := range map[string]func(*bench.WorkerSpec){
		"clients":  func(s *bench.WorkerSpec) { s.Options.Clients = 10_000_000 },
		"duration": func(s *bench.WorkerSpec) { s.Options.Duration = 1000 * time.Hour },
		"data":     func(s *bench.WorkerSpec) { s.Data = make([]byte, 65<<20) },
		"pipeline": func(s *bench.WorkerSpec) { s.Options.Pipeline = 1 << 30 },
		// Held out: ticks every nanosecond, each with its histogram,
		// kept until the result (24 h of them).
		"progress interval": func(s *bench.WorkerSpec) { s.Ticks, s.Options.ProgressInterval = true, time.Nanosecond },
	} {
		sp := ok()
		mod(sp)
		if err := checkWorkerSpec(sp, false); err == nil || !strings.Contains(err.Error(), what) {
			t.Errorf("%s: %v", what, err)
		}
	}
}
