package redisserver_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/redisserver"
	"redline/internal/testutil"
)

// Issue 10 item 3: the directory of a server whose redline was killed
// (SIGKILL: Stop never ran) is removed when a later run starts; those of
// live owners, and one an orphaned process still runs in, are kept.
func TestRemoveStaleDirs(t *testing.T) {
	testutil.Heavy(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	// A root run's server runs as an unprivileged user, who must reach it.
	os.Chmod(tmp, 0o755)
	os.Chmod(filepath.Dir(tmp), 0o755)
	killed := exec.Command("sleep", "60")
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	killed.Process.Kill()
	killed.Wait()
	mk := func(name string) string {
		d := filepath.Join(tmp, name)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "redis.conf"), []byte("port 1\n"), 0o600)
		return d
	}
	stale := mk(fmt.Sprintf("redline-redis-%d-123", killed.Process.Pid))
	live := mk(fmt.Sprintf("redline-redis-%d-456", os.Getppid()))
	old := mk("redline-redis-987654321")
	orphanDir := mk(fmt.Sprintf("redline-redis-%d-789", killed.Process.Pid+1000000))
	orphan := exec.Command("sleep", "60")
	orphan.Dir = orphanDir
	if err := orphan.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { orphan.Process.Kill(); orphan.Wait() })

	removed := redisserver.RemoveStale()
	if len(removed) != 1 || removed[0] != stale {
		t.Errorf("removed %v, want only %s", removed, stale)
	}
	for _, d := range []string{live, old, orphanDir} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s: %v, want it kept", d, err)
		}
	}
	// A server's own directory names its owner, so the next run can tell.
	s, err := redisserver.Start(context.Background(), redisserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if want := fmt.Sprintf("redline-redis-%d-", os.Getpid()); !strings.HasPrefix(filepath.Base(s.Dir), want) {
		t.Errorf("server directory %s does not start with %s", s.Dir, want)
	}
}
