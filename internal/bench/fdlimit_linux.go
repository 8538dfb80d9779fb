package bench

import (
	"fmt"
	"os"
	"syscall"
)

// Each connection is a file descriptor, so -c above the open-files limit
// used to fail half-way through set-up with EMFILE. Before connecting,
// the run raises the soft limit when the hard limit allows (Go already
// raises it to the hard limit at start-up, but a caller may have lowered
// it), tries the hard limit too (it takes CAP_SYS_RESOURCE), and
// otherwise says how many connections are possible.

// fdsPerLoop is what an event loop holds besides its connections: the
// epoll fd and the rate-mode timerfd.
const fdsPerLoop = 2

// fdSpare leaves room for what the run opens besides (the JSON file, a
// -k 0 reconnect racing its close).
const fdSpare = 16

// ensureFiles makes room for clients connections over loops event loops.
func ensureFiles(clients, loops int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return nil // unknown: let socket() say so
	}
	open := openFiles()
	plan, err := fileLimitPlan(open, clients, loops, lim)
	if err != nil || plan == lim {
		return err
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &plan); err != nil {
		return fileLimitError(open, clients, loops, lim, plan.Cur)
	}
	return nil
}

// fileLimitPlan returns the limit to set for the run: lim itself when it
// is enough, the soft limit raised (to the hard one when that is needed),
// or both raised (which takes privilege; the caller reports a refusal).
// It fails when even the largest limit possible is too small.
func fileLimitPlan(open, clients, loops int, lim syscall.Rlimit) (syscall.Rlimit, error) {
	want := uint64(open + clients + loops*fdsPerLoop + fdSpare)
	switch {
	case lim.Cur >= want:
		return lim, nil
	case lim.Max >= want:
		return syscall.Rlimit{Cur: want, Max: lim.Max}, nil
	case want > nrOpenMax():
		return lim, fileLimitError(open, clients, loops, lim, want)
	default:
		return syscall.Rlimit{Cur: want, Max: want}, nil
	}
}

func fileLimitError(open, clients, loops int, lim syscall.Rlimit, want uint64) error {
	possible := int64(lim.Max) - int64(open+loops*fdsPerLoop+fdSpare)
	return fmt.Errorf("-c %d needs %d open files (%d connections, %d for %d event loops, %d already open, %d spare) but the open-files limit is %d and cannot be raised here: at most %d connections are possible (raise the hard limit: ulimit -Hn %d as root, or LimitNOFILE=%d in a systemd unit; or lower -c)",
		clients, want, clients, loops*fdsPerLoop, loops, open, fdSpare, lim.Max, max(possible, 0), want, want)
}

// openFiles counts this process's open file descriptors.
func openFiles() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 3
	}
	return len(ents) - 1 // the directory's own fd while it is read
}

// nrOpenMax is the kernel's ceiling for any process's limit.
func nrOpenMax() uint64 {
	b, err := os.ReadFile("/proc/sys/fs/nr_open")
	var n uint64
	if err == nil {
		fmt.Sscan(string(b), &n)
	}
	if n == 0 {
		return 1 << 20
	}
	return n
}
