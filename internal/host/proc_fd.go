package host

import (
	"errors"
	"fmt"

	"redline/internal/host/kernel"
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
// error is kernel.ErrProcessGone (others are recorded in the snapshot).
func (s *heldScan) wait(r *reader) ([]ListenSocket, error) {
	<-s.done
	if errors.Is(s.err, kernel.ErrProcessGone) {
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
// directory that vanishes (the process ended) gives kernel.ErrProcessGone.
func (f *FS) fdSockets(dir string, visit func(ino uint64) (stop bool)) error {
	if f.live && !f.recording {
		return f.kernel.FDSockets(f.Path(dir), visit)
	}
	// fixture trees and captures: every link through Readlink, recorded
	ents, err := f.ReadDir(dir)
	switch {
	case err == nil:
	case isAbsent(err) && f.live:
		return kernel.ErrProcessGone
	case isAbsent(err):
		return nil // not captured
	default:
		return err
	}
	for _, e := range ents {
		target, _ := f.Readlink(dir + "/" + e.Name)
		if ino, ok := kernel.ParseSocketLink([]byte(target)); ok && visit(ino) {
			return nil
		}
	}
	if f.live {
		return kernel.GoneIfZombie(f.Path(dir))
	}
	return nil
}
