package kernel

import (
	"bytes"
	"errors"
	"fmt"
	iofs "io/fs"
	"math"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A process's open files are the links of /proc/PID/fd; a socket's
// target names its inode, the inode sock_diag and /proc/net/tcp list:
//
//	/proc/4242/fd/7 -> socket:[22220]
//
// A Redis with 20,000 clients has 20,000 of them.

// ErrProcessGone reports a process that ended while its fds were read.
var ErrProcessGone = errors.New("the process ended while its fds were read")

// FDSockets calls visit with the inode of each socket among the links of
// dir (a live /proc/PID/fd) until visit returns true. A link that
// vanishes meanwhile (the fd was closed) is skipped; a process that ends
// gives ErrProcessGone.
//
// It reads the fd directory in large getdents batches and each
// link with readlinkat on the open directory, the name passed straight
// from the batch and the target read into one buffer: no allocation and
// no path lookup from / per fd. The kernel's work per fd (about 3 µs:
// the listing, the lookup, the link's text) is the cost, so a table
// larger than the first batch (19,000 fds of a busy Redis) is read whole
// by the task_file BPF iterator (proc_fd_bpf.go: about 0.4 µs a socket)
// where it works, its first batch listed only; else its links after the
// first batch are split by fd number among up to GOMAXPROCS workers, the
// last range open to the end.
func (l Live) FDSockets(dir string, visit func(ino uint64) (stop bool)) error {
	s := &fdScan{dir: dir, visit: visit, pidfd: -1, noIter: l.NoIterator, hook: l.FDHook}
	if pid, ok := fdDirPID(dir); ok {
		// the process itself, whatever its pid names by the end
		if fd, err := unix.PidfdOpen(pid, 0); err == nil {
			s.pidfd = fd
			defer unix.Close(fd)
		}
	}
	next, full, err := s.scan(0, math.MaxInt, true)
	if err == nil && full && !s.stopped.Load() {
		err = s.rest(next)
	}
	if err != nil || s.stopped.Load() {
		return err
	}
	if s.pidfd >= 0 && unix.PidfdSendSignal(s.pidfd, 0, nil, 0) == unix.ESRCH {
		// ended (and reaped: its pid may name another process now)
		return fmt.Errorf("%w (pidfd)", ErrProcessGone)
	}
	return GoneIfZombie(dir)
}

// fdScan is one live scan, shared by its workers.
type fdScan struct {
	dir     string
	pidfd   int // the process's pidfd, -1 without one
	visit   func(ino uint64) bool
	noIter  bool            // Live.NoIterator
	hook    func(fd string) // Live.FDHook
	mu      sync.Mutex      // visit and hook run one at a time
	stopped atomic.Bool
}

// fdBatch is the getdents buffer: about 2,700 fds a call.
const fdBatch = 64 << 10

// iterable says whether the task_file iterator may be tried for the
// scan's process: a large table is then not read by readlink at all.
func (s *fdScan) iterable() bool {
	_, ok := fdDirPID(s.dir)
	return ok && !s.noIter && fdIterErr() == nil
}

// rest scans the fds from next on (0 when the first batch was only
// listed): through the iterator, or, if it fails (a refusal that will
// recur keeps it off for the process), by readlink from the fd after the
// last socket the iterator gave.
func (s *fdScan) rest(next int) error {
	pid, ok := fdDirPID(s.dir)
	if !ok || s.noIter {
		return s.parallel(next)
	}
	err := fdIterSockets(pid, s.pidfd, func(fd int, ino uint64) bool {
		if fd < next {
			return false // the first batch read it (the iterator failed before it)
		}
		next = fd + 1
		if s.hook != nil {
			s.hook(strconv.Itoa(fd))
		}
		if s.visit(ino) {
			s.stopped.Store(true)
		}
		return s.stopped.Load()
	})
	if err == nil {
		return nil
	}
	if iterLasting(err) {
		fdIterFailed(err)
	}
	return s.parallel(next)
}

// parallel scans the fds from next on with workers, by fd number ranges
// sized on the table's size (FDSize, a hint: the last range has no end).
func (s *fdScan) parallel(next int) error {
	workers := min(runtime.GOMAXPROCS(0), 4)
	size := fdTableSize(s.dir)
	if workers < 2 || size <= next+fdBatch/32 {
		_, _, err := s.scan(next, math.MaxInt, false)
		return err
	}
	span := (size - next + workers - 1) / workers
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for k := range workers {
		lo, hi := next+k*span, next+(k+1)*span
		if k == workers-1 {
			hi = math.MaxInt
		}
		wg.Go(func() { _, _, errs[k] = s.scan(lo, hi, false) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// scan reads the links of fds lo <= fd < hi, to the end of the range (or,
// with firstOnly, of the first batch: full says the batch filled the
// buffer, next is the fd after its last).
func (s *fdScan) scan(lo, hi int, firstOnly bool) (next int, full bool, err error) {
	dfd, err := unix.Open(s.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, false, goneIfAbsent(&iofs.PathError{Op: "open", Path: s.dir, Err: err})
	}
	defer unix.Close(dfd)
	if lo > 0 { // the directory's offsets are fd+2 ("." and ".." first)
		if _, err := unix.Seek(dfd, int64(lo)+2, 0); err != nil {
			return 0, false, &iofs.PathError{Op: "seek", Path: s.dir, Err: err}
		}
	}
	ents := make([]byte, fdBatch)
	link := make([]byte, 64) // "socket:[4026531840]" is 19; longer ones are not sockets
	for next = lo; ; {
		n, err := unix.Getdents(dfd, ents)
		if err != nil {
			return next, false, goneIfAbsent(&iofs.PathError{Op: "getdents", Path: s.dir, Err: err})
		}
		if n == 0 {
			return next, false, nil
		}
		if firstOnly && n > fdBatch-256 && s.iterable() {
			return lo, true, nil // the iterator reads them all, from lo
		}
		for off := 0; off+19 < n; {
			reclen := int(*(*uint16)(unsafe.Pointer(&ents[off+16])))
			name := ents[off+19 : off+reclen] // NUL-terminated, then padding
			off += reclen
			fd, ok := fdNumber(name)
			if !ok {
				continue // "." and ".."
			}
			if fd >= hi || s.stopped.Load() {
				return next, false, nil
			}
			next = fd + 1
			k, _, e := unix.Syscall6(unix.SYS_READLINKAT, uintptr(dfd), uintptr(unsafe.Pointer(&name[0])),
				uintptr(unsafe.Pointer(&link[0])), uintptr(len(link)), 0, 0)
			if e != 0 {
				k = 0 // closed since the listing (ENOENT), or the process ended: getdents says which
			}
			ino, ok := ParseSocketLink(link[:k])
			if ok || s.hook != nil {
				s.mu.Lock()
				if s.hook != nil {
					s.hook(strconv.Itoa(fd))
				}
				if ok && s.visit(ino) {
					s.stopped.Store(true)
				}
				s.mu.Unlock()
			}
		}
		if firstOnly {
			return next, n > fdBatch-256, nil
		}
	}
}

// fdNumber parses a NUL-terminated fd name.
func fdNumber(name []byte) (int, bool) {
	fd := 0
	for i, c := range name {
		switch {
		case c == 0:
			return fd, i > 0
		case c < '0' || c > '9' || i >= 10:
			return 0, false
		}
		fd = fd*10 + int(c-'0')
	}
	return 0, false
}

// fdTableSize reads the size of the process's fd table (FDSize in
// /proc/PID/status), 0 if it cannot.
func fdTableSize(fdDir string) int {
	status, err := os.ReadFile(fdDir[:len(fdDir)-len("fd")] + "status")
	if err != nil {
		return 0
	}
	_, rest, ok := bytes.Cut(status, []byte("\nFDSize:"))
	if !ok {
		return 0
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	n, _ := strconv.Atoi(string(bytes.TrimSpace(line)))
	return n
}

// ParseSocketLink reads the inode of a socket's fd link ("socket:[22220]").
func ParseSocketLink(target []byte) (uint64, bool) {
	const prefix = "socket:["
	if len(target) < len(prefix)+2 || string(target[:len(prefix)]) != prefix || target[len(target)-1] != ']' {
		return 0, false
	}
	var ino uint64
	for _, c := range target[len(prefix) : len(target)-1] {
		if c < '0' || c > '9' || ino > (math.MaxUint64-uint64(c-'0'))/10 {
			return 0, false
		}
		ino = ino*10 + uint64(c-'0')
	}
	return ino, true
}

// GoneIfZombie gives ErrProcessGone for a process that has exited but
// not been reaped: its fd directory reads empty.
func GoneIfZombie(fdDir string) error {
	stat, err := os.ReadFile(fdDir[:len(fdDir)-len("fd")] + "stat")
	if err != nil {
		return goneIfAbsent(err)
	}
	// "4242 (redis-server) S ...": the state follows the last ')'
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
		return fmt.Errorf("%w (a zombie)", ErrProcessGone)
	}
	return nil
}

// goneIfAbsent turns the ENOENT (or ESRCH) of a process's vanished /proc
// directory into ErrProcessGone.
func goneIfAbsent(err error) error {
	if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("%w (%v)", ErrProcessGone, err)
	}
	return err
}
