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

func (p *progressPrinter) begin(string) {}

func (p *progressPrinter) show(pr bench.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	phase := ""
	if pr.Warmup {
		phase = " [warm-up]"
	}
	switch p.mode {
	case "tty":
		fmt.Fprintf(p.w, "\r\033[K%s%s: rps=%.1f (overall: %.1f) avg_msec=%.3f p99_msec=%.3f", pr.Title, phase, pr.IntervalRPS, pr.OverallRPS, pr.IntervalAvg, pr.IntervalP99)
		p.printed = true
	case "plain":
		if pr.Final && pr.IntervalRequests == 0 {
			return // nothing since the last line
		}
		fmt.Fprintf(p.w, "%s%s: %.1fs %d requests, rps=%.1f (overall: %.1f) avg_msec=%.3f p99_msec=%.3f max_msec=%.3f\n", pr.Title, phase, pr.Elapsed.Seconds(), pr.Requests, pr.IntervalRPS, pr.OverallRPS, pr.IntervalAvg, pr.IntervalP99, pr.IntervalMax)
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
