package serverhost_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"redline/internal/redisserver"
	"redline/internal/remote"
	"redline/internal/serverhost"
	"redline/internal/testutil"
)

// Issue 35, item 1: a root session's redis.stop returned the end of
// DIR/redis.log, read by name in a directory lent to the server's user;
// that user swapped the log for a link to a root-only file, and the file
// went to the session's client. Now the tail comes from the server's own
// log descriptor.
func TestSessionRedisStopLogTailNotThroughALink(t *testing.T) {
	testutil.NeedRoot(t)
	testutil.NeedTools(t, "redis-check-rdb")
	const marker = "ROOT-ONLY-SECRET-35-1-SESSION"
	secret := testutil.SecretFile(t, marker)
	u, err := redisserver.ServerUser()
	if err != nil {
		t.Fatal(err)
	}
	c, in, done := pipeSession(t, t.TempDir(), t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var srv remote.RedisServer
	if err := c.Call(ctx, serverhost.OpRedisStart, serverhost.RedisStartArgs{Config: []string{"io-threads 1"}}, &srv); err != nil {
		t.Fatal(err)
	}
	testutil.RunAs(t, u, fmt.Sprintf("mv -f %[1]s/redis.log %[1]s/old.log && ln -s %[2]s %[1]s/redis.log", srv.Dir, secret))
	var out serverhost.RedisStopResult
	err = c.Call(ctx, serverhost.OpRedisStop, serverhost.RedisStopArgs{ID: srv.ID}, &out)
	if strings.Contains(out.LogTail, marker) || (err != nil && strings.Contains(err.Error(), marker)) {
		t.Fatalf("redis.stop carried the link's target: %q, %v", out.LogTail, err)
	}
	if !strings.Contains(out.LogTail, "Ready to accept connections") {
		t.Errorf("redis.stop's log tail lacks the server's own log: %q", out.LogTail)
	}
	in.Close()
	<-done
}
