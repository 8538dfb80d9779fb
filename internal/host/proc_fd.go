package host

import (
	"bytes"
	"errors"
	"fmt"
	iofs "io/fs"
	"math"
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
// reads, with the fd's name.
var fdScanHook func(fd string)

// listenersHeld returns the inodes of listeners (the namespace's LISTEN
// sockets) that the process pid holds; a process with none is not scanned.
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
	if err != nil && !errors.Is(err, errProcessGone) {
		r.fail(permissionHint(err))
	}
	return held, err
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
	return nil
}

// liveFDSockets reads the fd directory in large getdents batches and each
// link with readlinkat on the open directory, the name passed straight
// from the batch and the target read into one buffer: no allocation and
// no path lookup from / per fd (19,000 fds of a busy Redis).
func liveFDSockets(dir string, visit func(ino uint64) bool) error {
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return goneIfAbsent(&iofs.PathError{Op: "open", Path: dir, Err: err})
	}
	defer unix.Close(dfd)
	ents := make([]byte, 64<<10) // about 2,000 fds a call
	link := make([]byte, 64)     // "socket:[4026531840]" is 19; longer ones are not sockets
	for {
		n, err := unix.Getdents(dfd, ents)
		if err != nil {
			return goneIfAbsent(&iofs.PathError{Op: "getdents", Path: dir, Err: err})
		}
		if n == 0 {
			return goneIfZombie(dir)
		}
		for off := 0; off+19 < n; {
			reclen := int(*(*uint16)(unsafe.Pointer(&ents[off+16])))
			name := ents[off+19 : off+reclen] // NUL-terminated, then padding
			off += reclen
			if name[0] == '.' {
				continue
			}
			k, _, e := unix.Syscall6(unix.SYS_READLINKAT, uintptr(dfd), uintptr(unsafe.Pointer(&name[0])),
				uintptr(unsafe.Pointer(&link[0])), uintptr(len(link)), 0, 0)
			if fdScanHook != nil {
				fdScanHook(cString(name))
			}
			if e != 0 {
				continue // closed since the listing (ENOENT), or the process ended: getdents says which
			}
			if ino, ok := parseSocketLink(link[:k]); ok && visit(ino) {
				return nil
			}
		}
	}
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

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
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
