package steer

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Tracefs is a tracefs mount the sampler reads formats from.
type Tracefs struct {
	Dir     string
	mounted bool // by us, in a temporary directory
}

// OpenTracefs finds a tracefs mount (or /sys/kernel/tracing,
// /sys/kernel/debug/tracing), and when there is none mounts one in a
// private temporary directory that Close unmounts.
func OpenTracefs() (*Tracefs, error) {
	if dir := mountedTracefs("/proc/self/mountinfo"); dir != "" {
		return &Tracefs{Dir: dir}, nil
	}
	for _, d := range []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"} {
		if _, err := os.Stat(filepath.Join(d, "events")); err == nil {
			return &Tracefs{Dir: d}, nil
		}
	}
	dir, err := os.MkdirTemp("", "redline-tracefs-")
	if err != nil {
		return nil, err
	}
	if err := unix.Mount("nodev", dir, "tracefs", 0, ""); err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("mount tracefs on %s: %w (run as root; the kernel needs CONFIG_TRACING)", dir, err)
	}
	return &Tracefs{Dir: dir, mounted: true}, nil
}

// Close unmounts a tracefs OpenTracefs mounted.
func (t *Tracefs) Close() error {
	if !t.mounted {
		return nil
	}
	t.mounted = false
	if err := unix.Unmount(t.Dir, 0); err != nil {
		return fmt.Errorf("unmount tracefs %s: %w", t.Dir, err)
	}
	return os.Remove(t.Dir)
}

// mountedTracefs returns the first tracefs mount point in a mountinfo file.
func mountedTracefs(mountinfo string) string {
	f, err := os.Open(mountinfo)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if dir := parseMountinfoTracefs(sc.Text()); dir != "" {
			return dir
		}
	}
	return ""
}

// parseMountinfoTracefs returns the mount point of a mountinfo line for
// a tracefs mount:
//
//	36 25 0:12 / /sys/kernel/tracing rw,nosuid,nodev,noexec,relatime shared:15 - tracefs tracefs rw
func parseMountinfoTracefs(line string) string {
	pre, post, ok := strings.Cut(line, " - ")
	if !ok {
		return ""
	}
	f, p := strings.Fields(pre), strings.Fields(post)
	if len(f) < 5 || len(p) < 1 || p[0] != "tracefs" {
		return ""
	}
	return strings.ReplaceAll(f[4], `\040`, " ")
}
