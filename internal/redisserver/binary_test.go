package redisserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"redline/internal/testutil"
)

// Without redis-server on PATH, a server starts from redis-tools' binary
// (what make lab installs) and runs as redis-server.
func TestStartFromRedisTools(t *testing.T) {
	testutil.Heavy(t)
	real, err := exec.LookPath(debianServer)
	if err != nil {
		t.Skip("no redis-check-rdb (redis-tools)")
	}
	path := t.TempDir()
	if err := os.Symlink(real, filepath.Join(path, debianServer)); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", path)
	s, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(s.Pid()) + "/comm")
	if err != nil || strings.TrimSpace(string(comm)) != "redis-server" {
		t.Fatalf("comm %q, %v; want redis-server", comm, err)
	}
}

func TestLookServerMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := lookServer(""); err == nil || !strings.Contains(err.Error(), "redis-tools") {
		t.Fatalf("%v; want an error naming redis-tools", err)
	}
}
