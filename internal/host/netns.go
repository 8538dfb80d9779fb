package host

import (
	"fmt"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// Network-namespaced sysctls (somaxconn, tcp_max_syn_backlog ...) are only
// visible from inside the namespace: /proc/sys/net shows the namespace of
// whoever opens it. On the live machine they are read by a thread that
// enters the process's namespace (setns, as `nsenter -t PID -n sysctl`
// does); a capture stores them under netns/INODE/proc/sys/net/... and a
// fixture tree answers from there.

// netnsPath is where a fixture tree keeps a namespace's copy of hostPath.
func netnsPath(ino uint64, hostPath string) string {
	return fmt.Sprintf("/netns/%d%s", ino, hostPath)
}

// readNetnsSysctls reads the net.* sysctls of SysctlNames inside the
// network namespace of pid.
func readNetnsSysctls(r *reader, pid int, ino uint64) Sysctls {
	var names, paths []string
	for _, name := range SysctlNames {
		if strings.HasPrefix(name, "net.") {
			names = append(names, name)
			paths = append(paths, SysctlPath(name))
		}
	}
	data, errs := r.fs.readInNetns(pid, ino, paths)
	out := Sysctls{}
	for i := range paths {
		if err := errs[i]; err != nil {
			if !isAbsent(err) && !isUnsupported(err) {
				r.fail(permissionHint(err))
			}
			continue
		}
		out[names[i]] = normalizeSysctl(string(data[i]))
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// readInNetns reads host paths inside the network namespace of pid (inode
// ino). Every path is recorded under its netns/INODE/... name. If the
// namespace cannot be entered, every path gets that error.
func (f *FS) readInNetns(pid int, ino uint64, paths []string) ([][]byte, []error) {
	data, errs := make([][]byte, len(paths)), make([]error, len(paths))
	if f.live {
		liveReadInNetns(pid, paths, data, errs)
		for i, p := range paths {
			f.record(Access{Kind: AccessVirtual, Path: netnsPath(ino, p), Data: data[i], Err: errs[i]})
		}
		return data, errs
	}
	for i, p := range paths {
		data[i], errs[i] = f.ReadFile(netnsPath(ino, p))
	}
	return data, errs
}

// liveReadInNetns enters the namespace on a locked OS thread, reads, and
// goes back. If going back fails the thread stays locked, so the Go
// runtime discards it rather than reuse a thread in the wrong namespace.
func liveReadInNetns(pid int, paths []string, data [][]byte, errs []error) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		restored, err := withNetns(pid, func() {
			for i, p := range paths {
				data[i], errs[i] = readAll(p)
			}
		})
		if err != nil {
			for i := range errs {
				errs[i] = err
			}
		}
		if restored {
			runtime.UnlockOSThread()
		}
	}()
	<-done
}

func withNetns(pid int, fn func()) (restored bool, err error) {
	self, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return true, fmt.Errorf("open own network namespace: %w", err)
	}
	defer unix.Close(self)
	target, err := unix.Open(fmt.Sprintf("/proc/%d/ns/net", pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return true, fmt.Errorf("open network namespace of pid %d: %w", pid, err)
	}
	defer unix.Close(target)
	if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
		return true, fmt.Errorf("enter network namespace of pid %d: %w (run as root to read its sysctls)", pid, err)
	}
	fn()
	return unix.Setns(self, unix.CLONE_NEWNET) == nil, nil
}
