package kernel

import (
	"fmt"
	"os"

	"redline/internal/netns"
)

// ReadInNetns reads files inside the network namespace of pid through a
// thread that enters it (netns.Do: setns, as `nsenter -t PID -n` does):
// /proc/sys/net shows the namespace of whoever opens it. If the namespace
// cannot be entered, every path gets that error; a failure to come back
// after reading leaves the data good (netns retires the thread).
func (Live) ReadInNetns(pid int, paths []string) ([][]byte, []error) {
	data, errs := make([][]byte, len(paths)), make([]error, len(paths))
	read := false
	err := netns.Do(netns.PidPath(pid), func() error {
		for i, p := range paths {
			data[i], errs[i] = os.ReadFile(p)
		}
		read = true
		return nil
	})
	if err != nil && !read {
		err = fmt.Errorf("net sysctls of pid %d: %w", pid, err) // host's permissionHint adds "run as root"
		for i := range errs {
			errs[i] = err
		}
	}
	return data, errs
}
