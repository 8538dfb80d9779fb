// Package earlysignal holds redline's stop signals from the first
// moments of the process until the command's own watch takes them
// (cli's stopOnSignals), so a stop signal that comes while the process
// is still starting is a stop like any other instead of its death.
//
// A Go program dies by SIGINT or SIGTERM until it asks for them
// (signal.Notify), and redline asked only once its command started: after
// the runtime's start and every package's initialisation, some 25-60 ms on
// an idle machine and over a second on two loaded cores, where one of 100
// `timeout -s INT` runs of bench died that way with nothing printed or
// saved (issue 40). This package has no dependency beyond the standard
// library's signal handling, so it is initialised among the first; its
// init asks for the stop signals, and HandOver gives what came meanwhile
// to the command's watch. Only SIGKILL, or a signal before the runtime
// itself started, still ends a starting process.
package earlysignal

import (
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
)

// Signals are redline's stop signals: each stops a command the way
// Ctrl-C does (internal/cli/stop.go).
var Signals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

var (
	mu    sync.Mutex
	early chan os.Signal // nil when not watching
)

func init() {
	// A test binary that is not running as redline (REDLINE_TEST_MAIN)
	// keeps the default actions: go test's Ctrl-C must end it.
	if strings.HasSuffix(os.Args[0], ".test") && os.Getenv("REDLINE_TEST_MAIN") != "1" {
		return
	}
	watch()
}

// watch asks for the stop signals that are not ignored (a signal ignored
// at the start, as under nohup, stays ignored).
func watch() {
	mu.Lock()
	defer mu.Unlock()
	early = make(chan os.Signal, 2*len(Signals))
	for _, sig := range Signals {
		if !signal.Ignored(sig) {
			signal.Notify(early, sig)
		}
	}
}

// HandOver ends the early watch and returns the stop signals it received,
// in order; none once it was called before. The caller asks for the same
// signals (signal.Notify on its own channel) first, so none falls between
// the two.
func HandOver() []os.Signal {
	mu.Lock()
	defer mu.Unlock()
	if early == nil {
		return nil
	}
	signal.Stop(early)
	var got []os.Signal
	for {
		select {
		case sig := <-early:
			got = append(got, sig)
		default:
			early = nil
			return got
		}
	}
}
