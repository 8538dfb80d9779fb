package host

import (
	"bytes"
	"errors"
	"fmt"
	iofs "io/fs"
	"math"
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
// A Redis with 20,000 clients has 20,000 of them. Which of them are
// listeners is known beforehand (the namespace's LISTEN sockets, a small
// dump), so the scan looks only for those inodes and stops once every one
// of them is found: the process can hold no listener beyond the
// namespace's (a listener opened after the dump is not in the dump either
// way). Until then it reads every fd: a listener can be opened at any time
// (CONFIG SET port, tls-port) and so sit at any fd number.

// errProcessGone reports a process that ended while its fds were read.
var errProcessGone = errors.New("the process ended while its fds were read")

// fdScanHook, when set (tests), runs after each fd link the live scan
// reads, with the fd's name; in a scan by the iterator, after each
// socket it gives.
var fdScanHook func(fd string)

// listenersHeld returns the inodes of listeners (the namespace's LISTEN
// sockets) that the process pid holds; a process with none is not
// scanned. It touches nothing of r but its FS, so it may run beside
// the reader.
func listenersHeld(r *reader, pid int, listeners []tcpSocket) (map[uint64]bool, error) {
	want := map[uint64]bool{}
	for _, s := range listeners {
		if s.state == tcpListen {
			want[s.inode] = true
		}
	}
	held := map[uint64]bool{}
	if len(want) == 0 {
		return held, nil
	}
	err := r.fs.fdSockets(fmt.Sprintf("/proc/%d/fd", pid), func(ino uint64) bool {
		if want[ino] {
			held[ino] = true
		}
		return len(held) == len(want)
	})
	return held, err
}

// heldScan is a process's fd scan, under way or done.
type heldScan struct {
	listeners []tcpSocket
	done      chan struct{}
	held      map[uint64]bool
	err       error
}

// startListenersHeld starts the fd scan of pid for listeners. On the live
// machine it runs beside the reader (the kernel's per-fd work is most of
// inspect's time at 20,000 clients, and the reader meanwhile reads the
// rest of the process and dumps the sockets of Options.Ports); a fixture
// tree or a capture is scanned at once, in order.
func startListenersHeld(r *reader, pid int, listeners []tcpSocket) *heldScan {
	s := &heldScan{listeners: listeners, done: make(chan struct{})}
	scan := func() {
		defer close(s.done)
		s.held, s.err = listenersHeld(r, pid, listeners)
	}
	if r.fs.live && !r.fs.recording {
		go func() {
			fdScanSlots <- struct{}{} // a host with 50 Redis instances: 4 scans at a time
			defer func() { <-fdScanSlots }()
			scan()
		}()
	} else {
		scan()
	}
	return s
}

// fdScanSlots bounds the processes scanned at once (each by up to 4
// workers).
var fdScanSlots = make(chan struct{}, 4)

// wait returns the process's listening sockets once the scan is done; the
// error is errProcessGone (others are recorded in the snapshot).
func (s *heldScan) wait(r *reader) ([]ListenSocket, error) {
	<-s.done
	if errors.Is(s.err, errProcessGone) {
		return nil, s.err
	}
	if s.err != nil {
		r.fail(permissionHint(s.err))
	}
	return listeningSockets(s.listeners, s.held), nil
}

// fdSockets calls visit with the inode of each socket among the links of
// the host directory dir (a /proc/PID/fd), until visit returns true. A
// link that vanishes meanwhile (the fd was closed) is skipped; a
// directory that vanishes (the process ended) gives errProcessGone.
func (f *FS) fdSockets(dir string, visit func(ino uint64) (stop bool)) error {
	if f.live && !f.recording {
		return liveFDSockets(f.Path(dir), visit)
	}
	// fixture trees and captures: every link through Readlink, recorded
	ents, err := f.ReadDir(dir)
	switch {
	case err == nil:
	case isAbsent(err) && f.live:
		return errProcessGone
	case isAbsent(err):
		return nil // not captured
	default:
		return err
	}
	for _, e := range ents {
		target, _ := f.Readlink(dir + "/" + e.Name)
		if ino, ok := parseSocketLink([]byte(target)); ok && visit(ino) {
			return nil
		}
	}
	if f.live {
		return goneIfZombie(f.Path(dir))
	}
	return nil
}

// liveFDSockets reads the fd directory in large getdents batches and each
// link with readlinkat on the open directory, the name passed straight
// from the batch and the target read into one buffer: no allocation and
// no path lookup from / per fd. The kernel's work per fd (about 3 µs:
// the listing, the lookup, the link's text) is the cost, so a table
// larger than the first batch (19,000 fds of a busy Redis) is read whole
// by the task_file BPF iterator (proc_fd_bpf.go: about 0.4 µs a socket)
// where it works, its first batch listed only; else its links after the
// first batch are split by fd number among up to GOMAXPROCS workers, the
// last range open to the end.
func liveFDSockets(dir string, visit func(ino uint64) bool) error {
	s := &fdScan{dir: dir, visit: visit, pidfd: -1}
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
		return fmt.Errorf("%w (pidfd)", errProcessGone)
	}
	return goneIfZombie(dir)
}

// fdScan is one live scan, shared by its workers.
type fdScan struct {
	dir     string
	pidfd   int // the process's pidfd, -1 without one
	visit   func(ino uint64) bool
	mu      sync.Mutex // visit and fdScanHook run one at a time
	stopped atomic.Bool
}

// fdBatch is the getdents buffer: about 2,700 fds a call.
const fdBatch = 64 << 10

// iterable says whether the task_file iterator may be tried for the
// scan's process: a large table is then not read by readlink at all.
func (s *fdScan) iterable() bool {
	_, ok := fdDirPID(s.dir)
	return ok && !fdIterOff && fdIterErr() == nil
}

// rest scans the fds from next on (0 when the first batch was only
// listed): through the iterator, or, if it fails (a refusal that will
// recur keeps it off for the process), by readlink from the fd after the
// last socket the iterator gave.
func (s *fdScan) rest(next int) error {
	pid, ok := fdDirPID(s.dir)
	if !ok || fdIterOff {
		return s.parallel(next)
	}
	err := fdIterSockets(pid, s.pidfd, func(fd int, ino uint64) bool {
		if fd < next {
			return false // the first batch read it (the iterator failed before it)
		}
		next = fd + 1
		if fdScanHook != nil {
			fdScanHook(strconv.Itoa(fd))
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

// fdIterOff, when set (tests), keeps scans to readlink.
var fdIterOff bool

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
			ino, ok := parseSocketLink(link[:k])
			if ok || fdScanHook != nil {
				s.mu.Lock()
				if fdScanHook != nil {
					fdScanHook(strconv.Itoa(fd))
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
	status, err := readAll(fdDir[:len(fdDir)-len("fd")] + "status")
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

// parseSocketLink reads the inode of a socket's fd link ("socket:[22220]").
func parseSocketLink(target []byte) (uint64, bool) {
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

// goneIfZombie gives errProcessGone for a process that has exited but
// not been reaped: its fd directory reads empty.
func goneIfZombie(fdDir string) error {
	stat, err := readAll(fdDir[:len(fdDir)-len("fd")] + "stat")
	if err != nil {
		return goneIfAbsent(err)
	}
	// "4242 (redis-server) S ...": the state follows the last ')'
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
		return fmt.Errorf("%w (a zombie)", errProcessGone)
	}
	return nil
}

// goneIfAbsent turns the ENOENT (or ESRCH) of a process's vanished /proc
// directory into errProcessGone.
func goneIfAbsent(err error) error {
	if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("%w (%v)", errProcessGone, err)
	}
	return err
}
