package bench

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The event loop's own system calls. read and write are on non-blocking
// sockets, so they never block and need none of the scheduler bookkeeping
// of syscall.Syscall (entersyscall/exitsyscall, ~100 ns per call, and the
// runtime handing the P to another thread). epoll_wait does block: as a
// raw call it keeps the P, so the runtime does not wake a spinning thread
// on the other CPU at every wait (which competes with the server on small
// machines); the runtime's preemption signal interrupts it (EINTR) when
// the scheduler or the GC needs the P. That is only fair while every loop
// has a P of its own: procsFor (procs.go) raises GOMAXPROCS for a run
// whose loops outnumber the Ps.

func rawRead(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

func rawWrite(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

func rawEpollWait(epfd int, events []unix.EpollEvent, msec int) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(msec), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
