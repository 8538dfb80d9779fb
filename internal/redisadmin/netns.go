package redisadmin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ReadInNetNS reads files under /proc/sys/net as the network namespace of
// process pid sees them. net.* sysctls are per namespace (somaxconn is
// looked up through sock_net() in listen()), so a server in a container or
// an "ip netns" namespace is governed by its own values, not the host's.
//
// It needs CAP_SYS_ADMIN (setns). The switch happens on a dedicated OS
// thread that is never handed back to the Go scheduler: when the goroutine
// ends the runtime destroys the thread, so no other goroutine can ever run
// in the server's namespace. Missing files are left out of the result.
func ReadInNetNS(pid int, paths []string) (map[string]string, error) {
	nsPath := filepath.Join("/proc", strconv.Itoa(pid), "ns", "net")
	f, err := os.Open(nsPath)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w (run as root to read sysctls in the server's network namespace)", nsPath, err)
	}
	defer f.Close()
	type result struct {
		vals map[string]string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{err: fmt.Errorf("enter the network namespace of pid %d: %w (run as root)", pid, err)}
			return
		}
		vals := map[string]string{}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				ch <- result{err: fmt.Errorf("read %s in the network namespace of pid %d: %w", p, pid, err)}
				return
			}
			vals[p] = strings.TrimSpace(string(b))
		}
		ch <- result{vals: vals}
	}()
	r := <-ch
	return r.vals, r.err
}
