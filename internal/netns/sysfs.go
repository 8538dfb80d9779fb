package netns

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// DoWithSysfs runs fn in network namespace ns as Do does, on a thread that
// also has a mount namespace of its own in which /sys is a sysfs mounted
// from ns: its /sys/class/net lists ns's interfaces, the ones netlink
// answers for there (the host's /sys lists the host's, and every read of
// a NIC of ns failed). The mount is private to that thread's namespace and
// never reaches the host's mount table; the thread is never handed to
// another goroutine (its goroutine ends locked, so the runtime destroys
// it, and its mount namespace with it). When the mount namespace or the
// sysfs cannot be had, fn still runs in ns with the host's /sys, and
// sysErr says why. An empty ns runs fn here with sysErr nil.
func DoWithSysfs(ns string, fn func(sysErr error) error) error {
	if ns == "" {
		return fn(nil)
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: see above
		if _, err := Enter(ns); err != nil {
			errc <- err
			return
		}
		errc <- fn(privateSysfs())
	}()
	return <-errc
}

// privateSysfs gives the calling (locked) thread a mount namespace of its
// own, private from the host's, with a sysfs of its network namespace on
// /sys, read-only.
func privateSysfs() error {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("a mount namespace of its own: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	if err := unix.Mount("sysfs", "/sys", "sysfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount a sysfs: %w", err)
	}
	return nil
}
