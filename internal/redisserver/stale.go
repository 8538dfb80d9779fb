package redisserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// dirPrefix starts the name of a directory Start makes: the owner's pid
// follows ("redline-redis-4242-123456"), so a later run can tell a
// directory left by a killed redline (its redis-server dies with it,
// Pdeathsig) from one in use.
const dirPrefix = "redline-redis-"

func newDir() (string, error) {
	staleOnce.Do(func() { RemoveStale() })
	return os.MkdirTemp("", fmt.Sprintf("%s%d-", dirPrefix, os.Getpid()))
}

var staleOnce sync.Once

// RemoveStale deletes the directories of servers started by earlier runs
// whose redline is gone (killed, so Stop never ran) and in which no process
// still runs, and returns them. Start calls it once per process, as the lab
// removes stale namespaces (netns.RemoveStale) when it starts.
func RemoveStale() []string {
	tmp := os.TempDir()
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		dir := filepath.Join(tmp, e.Name())
		if e.IsDir() && staleDir(e.Name()) && !inUse(dir) && os.RemoveAll(dir) == nil {
			removed = append(removed, dir)
		}
	}
	return removed
}

// staleDir reports whether name is a server directory whose owner is gone.
// Directories of older redlines (no pid in the name) are left alone.
func staleDir(name string) bool {
	rest, ok := strings.CutPrefix(name, dirPrefix)
	pidStr, _, dash := strings.Cut(rest, "-")
	if !ok || !dash {
		return false
	}
	pid, err := strconv.Atoi(pidStr)
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return false
	}
	return syscall.Kill(pid, 0) == syscall.ESRCH
}

// inUse reports whether a process has its working directory in dir (an
// orphaned redis-server that outlived its redline).
func inUse(dir string) bool {
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", p.Name(), "cwd"))
		if err == nil && (cwd == dir || strings.HasPrefix(cwd, dir+"/")) {
			return true
		}
	}
	return false
}
