package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"golang.org/x/term"

	"redline/internal/bench"
	"redline/internal/bench/cmdline"
)

// progressPrinter shows a running test: on a terminal, one line rewritten
// in place (redis-benchmark's layout plus p99); otherwise a plain line on
// stderr every second, so logs stay readable, except with -q or --csv,
// which stay quiet; or nothing. Each line covers
// the whole interval since the previous one: the engine is asked for
// progress at the printer's own interval.
type progressPrinter struct {
	mu      sync.Mutex
	w       io.Writer
	mode    string // "tty", "plain" or "none"
	printed bool
	// lastElapsed is the measured time at the previous plain line.
	lastElapsed time.Duration
}

// Progress intervals: a terminal line is rewritten four times a second; a
// plain line is logged once a second.
const (
	ttyInterval   = 250 * time.Millisecond
	plainInterval = time.Second
)

// interval is how often the printer wants bench.Progress.
func (p *progressPrinter) interval() time.Duration {
	if p.mode == "plain" {
		return plainInterval
	}
	return ttyInterval
}

func newProgressPrinter(s *streams, f *cmdline.Flags) *progressPrinter {
	p := &progressPrinter{mode: f.Progress}
	switch p.mode {
	case "auto":
		switch {
		case !f.CSV && isTerminal(s.out):
			p.mode, p.w = "tty", s.out
		case isTerminal(s.err):
			p.mode, p.w = "tty", s.err
		case f.Quiet || f.CSV:
			// redis-benchmark's -q shows one line overwritten in place
			// and --csv none: nothing a log keeps. A quiet run writes no
			// log lines either (--progress plain asks for them).
			p.mode = "none"
		default:
			p.mode, p.w = "plain", s.err
		}
	case "tty":
		p.w = s.err
		if !f.CSV && isTerminal(s.out) {
			p.w = s.out
		}
	case "plain":
		p.w = s.err
	default:
		p.mode = "none"
	}
	return p
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr }) // an *os.File, or run's closedOutput around one
	return ok && f.Fd() != ^uintptr(0) && term.IsTerminal(int(f.Fd()))
}

func (p *progressPrinter) begin(string) {
	p.mu.Lock()
	p.lastElapsed = 0
	p.mu.Unlock()
}

// show prints one progress call. A warm-up line says only how long load
// has been sent: its replies are not measured, so it has no figures (it
// said "0 requests, rps=0.0" while load went out). The last plain line of
// a test covers the time since the line before, often a fraction of a
// second: it says so, not to pass for a second of its own.
func (p *progressPrinter) show(pr bench.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pr.Warmup {
		p.showWarmup(pr)
		return
	}
	switch p.mode {
	case "tty":
		fmt.Fprintf(p.w, "\r\033[K%s: rps=%.1f (overall: %.1f) avg_msec=%.3f p99_msec=%.3f", pr.Title, pr.IntervalRPS, pr.OverallRPS, pr.IntervalAvg, pr.IntervalP99)
		p.printed = true
	case "plain":
		span := pr.Elapsed - p.lastElapsed
		p.lastElapsed = pr.Elapsed
		if pr.Final && pr.IntervalRequests == 0 {
			return // nothing since the last line
		}
		tail := ""
		if pr.Final && span < plainInterval*9/10 {
			tail = fmt.Sprintf(" (the last %.3fs: %d)", span.Seconds(), pr.IntervalRequests)
		}
		fmt.Fprintf(p.w, "%s: %.1fs %d requests%s, rps=%.1f (overall: %.1f) avg_msec=%.3f p99_msec=%.3f max_msec=%.3f\n", pr.Title, pr.Elapsed.Seconds(), pr.Requests, tail, pr.IntervalRPS, pr.OverallRPS, pr.IntervalAvg, pr.IntervalP99, pr.IntervalMax)
	}
}

func (p *progressPrinter) showWarmup(pr bench.Progress) {
	switch p.mode {
	case "tty":
		fmt.Fprintf(p.w, "\r\033[K%s: warm-up %.1fs: load sent, not measured", pr.Title, pr.Elapsed.Seconds())
		p.printed = true
	case "plain":
		fmt.Fprintf(p.w, "%s: warm-up %.1fs: load sent, not measured\n", pr.Title, pr.Elapsed.Seconds())
	}
}

// end clears the progress line before the report is printed.
func (p *progressPrinter) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.printed {
		fmt.Fprint(p.w, "\r\033[K")
		p.printed = false
	}
}
