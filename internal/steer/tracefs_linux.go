package steer

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Tracefs is a tracefs the sampler reads formats from.
type Tracefs struct {
	Dir  string
	root *os.File // a private mount's root, held open (nil: the system's)
}

// tempPrefix names the directory a private tracefs is mounted on for the
// moment it takes to open it. Redlines before the mount was detached left
// theirs mounted there for their whole run (for ever after kill -9).
const tempPrefix = "redline-tracefs-"

// OpenTracefs finds the system's tracefs mount (or /sys/kernel/tracing,
// /sys/kernel/debug/tracing), and when there is none mounts a private
// one. Another redline's temporary mount is never used: its owner
// unmounts it when it ends, under whoever borrowed it (a steer started
// beside a lab then failed to read the tracepoints' formats). A private
// mount is held by a descriptor and detached at once: no other process
// sees it, and it goes with the descriptor, also when this process is
// killed with -9.
func OpenTracefs() (*Tracefs, error) {
	if dir := mountedTracefs("/proc/self/mountinfo"); dir != "" {
		return &Tracefs{Dir: dir}, nil
	}
	for _, d := range []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"} {
		if _, err := os.Stat(filepath.Join(d, "events")); err == nil {
			return &Tracefs{Dir: d}, nil
		}
	}
	return mountPrivate()
}

// mountPrivate mounts a tracefs that only this process can reach, through
// /proc/self/fd.
func mountPrivate() (*Tracefs, error) {
	dir, err := os.MkdirTemp("", tempPrefix)
	if err != nil {
		return nil, err
	}
	defer os.Remove(dir)
	if err := unix.Mount("nodev", dir, "tracefs", 0, ""); err != nil {
		return nil, fmt.Errorf("mount tracefs on %s: %w (run as root; the kernel needs CONFIG_TRACING)", dir, err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	// Detached, the mount lives as long as fd and is reached only through it.
	if uerr := unix.Unmount(dir, unix.MNT_DETACH); uerr != nil && err == nil {
		unix.Close(fd)
		err = fmt.Errorf("detach tracefs %s: %w", dir, uerr)
	}
	if err != nil {
		return nil, err
	}
	return &Tracefs{Dir: "/proc/self/fd/" + strconv.Itoa(fd), root: os.NewFile(uintptr(fd), dir)}, nil
}

// Close releases a private tracefs.
func (t *Tracefs) Close() error {
	if t.root == nil {
		return nil
	}
	err := t.root.Close()
	t.root = nil
	return err
}

// mountedTracefs returns the first tracefs mount point in a mountinfo
// file that is not another redline's temporary one.
func mountedTracefs(mountinfo string) string {
	f, err := os.Open(mountinfo)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if dir := parseMountinfoTracefs(sc.Text()); dir != "" && !strings.HasPrefix(filepath.Base(dir), tempPrefix) {
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
