package redisserver

import (
	"context"
	"io"
	"strings"
	"testing"

	"redline/internal/testutil"
)

// Issue 35, item 1: a root redline lent the server's directory to the
// server's user and then read DIR/redis.log by name; that user replaced
// it with a link to /etc/shadow, and the log tail (the session's
// redis.stop, the start error) and the lab's kept log carried the
// target. The log is now read only through the descriptor redline
// created it with.
func TestLogNotReadThroughAServerUsersLink(t *testing.T) {
	testutil.NeedRoot(t)
	const marker = "ROOT-ONLY-SECRET-35-1"
	secret := testutil.SecretFile(t, marker)
	s, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	u, err := ServerUser()
	if err != nil {
		t.Fatal(err)
	}
	testutil.RunAs(t, u, "mv -f "+s.Dir+"/redis.log "+s.Dir+"/old.log && ln -s "+secret+" "+s.Dir+"/redis.log")
	tail := s.LogTail(20)
	kept, err := io.ReadAll(s.Log())
	if err != nil {
		t.Fatal(err)
	}
	for what, got := range map[string]string{"LogTail": tail, "Log": string(kept)} {
		if strings.Contains(got, marker) {
			t.Errorf("%s carries the link's target: %q", what, got)
		}
		if !strings.Contains(got, "Ready to accept connections") {
			t.Errorf("%s lacks the server's own log: %q", what, got)
		}
	}
}

// A start that fails quotes the server's log, whoever could write its
// directory, and what the wrappers said.
func TestLogTailBounded(t *testing.T) {
	testutil.Heavy(t)
	s, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	big := strings.Repeat("x", 1000) + "\n"
	for i := 0; i < 200; i++ { // 200 kB, beyond logTailBytes
		s.log.WriteString(big)
	}
	s.log.WriteString("last line\n")
	b, _ := io.ReadAll(s.logEnd(logTailBytes))
	if len(b) > logTailBytes {
		t.Errorf("read %d bytes, want at most %d", len(b), logTailBytes)
	}
	if got := s.LogTail(1); got != "last line" {
		t.Errorf("LogTail(1) = %q", got)
	}
}
