package host

import (
	"fmt"
	"strings"
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
// network namespace of pid, once per namespace and Read: the servers of
// a namespace (a cluster's nodes) share its values. A namespace nothing
// was read from (its process ended before it was entered) is tried again
// through the next of its processes.
func readNetnsSysctls(r *reader, pid int, ino uint64) Sysctls {
	if s, ok := r.nsSysctls[ino]; ok {
		return s
	}
	s := readNetnsSysctlsOnce(r, pid, ino)
	if s != nil {
		r.nsSysctls[ino] = s
	}
	return s
}

func readNetnsSysctlsOnce(r *reader, pid int, ino uint64) Sysctls {
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
	if f.live {
		data, errs := f.kernel.ReadInNetns(pid, paths)
		for i, p := range paths {
			f.record(Access{Kind: AccessVirtual, Path: netnsPath(ino, p), Data: data[i], Err: errs[i]})
		}
		return data, errs
	}
	data, errs := make([][]byte, len(paths)), make([]error, len(paths))
	for i, p := range paths {
		data[i], errs[i] = f.ReadFile(netnsPath(ino, p))
	}
	return data, errs
}
