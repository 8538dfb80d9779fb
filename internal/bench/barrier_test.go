package bench

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"redline/internal/benchdata"
)

// linkWorker is a Worker behind a link with a one-way delay: each call
// waits a round trip, as a remote session's does. startVia, when set,
// is the one-way delay of the start message alone (a link that slowed).
type linkWorker struct {
	oneWay, startVia time.Duration
	mu               sync.Mutex
	startAt          time.Time
}

func (w *linkWorker) Ready(context.Context) error { return nil }

func (w *linkWorker) Clock(context.Context) (time.Time, error) {
	time.Sleep(w.oneWay)
	t := time.Now()
	time.Sleep(w.oneWay)
	return t, nil
}

func (w *linkWorker) Start(_ context.Context, d time.Duration) error {
	via := max(w.oneWay, w.startVia)
	time.Sleep(via)
	w.mu.Lock()
	w.startAt = time.Now().Add(d)
	w.mu.Unlock()
	time.Sleep(via)
	return nil
}

func (w *linkWorker) Result(context.Context) (*benchdata.Summary, []WorkerTick, error) {
	return nil, nil, nil
}

func (w *linkWorker) Stop() {}

// TestStartAllConcurrent: eight workers 50 ms away start within one round
// trip of each other (sent one after another, the later ones would start
// a round trip apart each), none counted late; a worker whose start
// message took 300 ms is recorded late and named in a warning.
func TestStartAllConcurrent(t *testing.T) {
	const rtt = 50 * time.Millisecond
	run := func(slow time.Duration) ([]*linkWorker, []*benchdata.WorkerClock, []string) {
		ws := make([]WorkerSlot, 8)
		lw := make([]*linkWorker, len(ws))
		for i := range ws {
			lw[i] = &linkWorker{oneWay: rtt / 2}
			ws[i] = WorkerSlot{N: i + 1, Host: "h", Worker: lw[i]}
		}
		lw[7].startVia = slow
		var warns []string
		clocks, err := startAll(context.Background(), ws, func(s string) { warns = append(warns, s) })
		if err != nil {
			t.Fatal(err)
		}
		return lw, clocks, warns
	}
	lw, clocks, warns := run(0)
	first, last := lw[0].startAt, lw[0].startAt
	for i, w := range lw {
		first, last = minTime(first, w.startAt), later(last, w.startAt)
		// bounds of one round trip, not a few ms: a loaded (or -race) test
		// host's sleeps overshoot, and starts sent one after another would
		// be seven round trips apart
		if clocks[i].LateMS > float64(rtt/time.Millisecond) {
			t.Errorf("worker %d counted %.1f ms late", i+1, clocks[i].LateMS)
		}
	}
	if spread := last.Sub(first); spread > rtt {
		t.Errorf("starts spread over %s: sent one after another", spread)
	}
	t.Log(warns)
	_, clocks, warns = run(300 * time.Millisecond)
	if clocks[7].LateMS < 100 || !strings.Contains(strings.Join(warns, "\n"), "worker 8 (h) started ") {
		t.Errorf("slow start: late %.1f ms, warnings %q", clocks[7].LateMS, warns)
	}
	t.Log(warns)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// stuckWorker answers the barrier, then neither reports nor stops: a
// SIGSTOPped process, a stalled host.
type stuckWorker struct{ linkWorker }

func (w *stuckWorker) Result(ctx context.Context) (*benchdata.Summary, []WorkerTick, error) {
	<-ctx.Done()
	return nil, nil, errors.New("no report within the stop wait: killed")
}

// doneWorker reports a result at once.
type doneWorker struct {
	linkWorker
	sum *benchdata.Summary
}

func (w *doneWorker) Result(context.Context) (*benchdata.Summary, []WorkerTick, error) {
	return w.sum, nil, nil
}

// TestRunWorkersResultDeadline: a worker that never reports is stopped at
// the result deadline and named; the run ends instead of waiting forever,
// with the other worker's figures merged.
func TestRunWorkersResultDeadline(t *testing.T) {
	ws := []WorkerSlot{
		{N: 1, Host: "a", Worker: &doneWorker{sum: workerSummary(t, 10, time.Now(), nil)}},
		{N: 2, Host: "b", Worker: &stuckWorker{}},
	}
	m, err := RunWorkers(context.Background(), ws, WorkersOptions{ReadyTimeout: time.Minute, ResultTimeout: 200 * time.Millisecond, StopWait: 100 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "worker 2 (b): sent no result within 200ms") {
		t.Fatalf("error %v", err)
	}
	if m == nil || m.Requests != 10 || m.WorkersFailed != 1 {
		t.Errorf("merged %+v", m)
	}
	t.Log(err)
}
