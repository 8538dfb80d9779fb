package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/redisserver"
	"redline/internal/testutil"
)

// Issue 35, item 1: a root lab kept each server's log by reading
// DIR/redis.log by name, in a directory lent to the server's user, and
// copied it into a world-readable redis-server-N.log next to the results.
// That user swaps the log for a link to a root-only file during the lab;
// nothing of the file reaches any output.
func TestLabKeepsNoLinkedLog(t *testing.T) {
	testutil.NeedRoot(t)
	const marker = "ROOT-ONLY-SECRET-35-1-LAB"
	secret := testutil.SecretFile(t, marker)
	u, err := redisserver.ServerUser()
	if err != nil {
		t.Fatal(err)
	}
	s := tiny(t, "managed")
	s.Variants = s.Variants[:2]
	s.Workloads[0].Bench = "redis-benchmark -t set -c 2 -n 500 -q"
	s.Repetitions = 2
	// Every managed server's directory, once lent to the server's user.
	dirs := filepath.Join(os.TempDir(), fmt.Sprintf("redline-redis-%d-*", os.Getpid()))
	swap := func(Event) {
		matches, _ := filepath.Glob(dirs)
		for _, d := range matches {
			if fi, err := os.Lstat(filepath.Join(d, "redis.log")); err == nil && fi.Mode().IsRegular() {
				testutil.RunAs(t, u, fmt.Sprintf("mv -f %[1]s/redis.log %[1]s/old.log && ln -s %[2]s %[1]s/redis.log", d, secret))
			}
		}
	}
	out := t.TempDir()
	res, err := Execute(context.Background(), Options{Scenario: s, ResultPath: filepath.Join(out, "result.json"), Version: "test", Observer: swap})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Target.Logs) == 0 {
		t.Fatal("no server log kept")
	}
	for _, p := range res.Target.Logs {
		if b, err := os.ReadFile(p); err != nil || !strings.Contains(string(b), "Ready to accept connections") {
			t.Errorf("log %s lacks the server's own log: %v", p, err)
		}
	}
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if b, _ := os.ReadFile(p); strings.Contains(string(b), marker) {
			t.Errorf("%s carries the link's target", p)
		}
		return nil
	})
}
