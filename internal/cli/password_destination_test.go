package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"redline/internal/secret"
	"redline/internal/testutil"
)

// recordingListener keeps every byte sent to l's connections (each
// closed after a moment, unanswered).
func recordingListener(l net.Listener) func() string {
	var mu sync.Mutex
	var got bytes.Buffer
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
				b := make([]byte, 4096)
				for {
					n, err := c.Read(b)
					mu.Lock()
					got.Write(b[:n])
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return func() string { mu.Lock(); defer mu.Unlock(); return got.String() }
}

// Issue 35, item 3: tune apply PLAN --dry-run sent $REDISCLI_AUTH to the
// plan's redis.addr, a loopback port another local user listened on. The
// environment's password now goes to a file's address only when root or
// the invoking user owns the listener; the command says it withheld it.
func TestTuneApplyWithholdsTheEnvPasswordFromAnotherUsersListener(t *testing.T) {
	testutil.NeedRoot(t)
	const pw = "root-env-secret-35-3"
	t.Setenv(secret.EnvVar, pw)
	l := testutil.ListenAs(t, 65534)
	got := recordingListener(l)
	root, _ := makeTuneTree(t)
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	os.WriteFile(plan, []byte(fmt.Sprintf("version: 1\nredis: {addr: %q}\nchanges:\n  - {kind: redis-config, target: hz, value: \"11\"}\n", l.Addr())), 0o644)
	for _, node := range []bool{false, true} {
		if node { // the same address as a change's node
			os.WriteFile(plan, []byte(fmt.Sprintf("version: 1\nchanges:\n  - {kind: redis-config, target: hz, value: \"11\", node: %q}\n", l.Addr())), 0o644)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, errs, _ := runCLI(t, ctx, nil, "tune", "apply", plan, "--dry-run", "--root", root, "--state-dir", t.TempDir())
		cancel()
		if strings.Contains(got(), pw) {
			t.Fatalf("the environment's password reached uid 65534's listener (node %v)", node)
		}
		if !strings.Contains(errs, "not sent to "+l.Addr().String()) || !strings.Contains(errs, "uid 65534") {
			t.Errorf("node %v: the command does not say it withheld the password:\n%s", node, errs)
		}
	}
}
