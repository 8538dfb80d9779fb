package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// do answers one synchronous operation: the session's own (hello,
// heartbeat), else the handler's (the server-host API's, or a worker
// session's bench operations).
func (s *session) do(ctx context.Context, op string, raw json.RawMessage) (any, error) {
	switch op {
	case OpHello:
		return s.hello(raw)
	case OpHeartbeat:
		return struct{}{}, nil
	}
	if s.host == nil {
		return nil, fmt.Errorf("unknown operation %q", op)
	}
	res, err := s.host.Do(ctx, op, raw)
	if errors.Is(err, ErrUnknownOp) {
		return nil, fmt.Errorf("unknown operation %q", op)
	}
	return res, err
}

// hello checks the client is this redline (the version is the protocol)
// and says who the session is. Its arguments are decoded leniently: a
// client of another version must reach the version check, to be told so
// by name rather than by an unknown field.
func (s *session) hello(raw json.RawMessage) (any, error) {
	var a HelloArgs
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, fmt.Errorf("bad hello: %w", err)
		}
	}
	if err := versionMismatch(s.o.Version, a.Version); err != nil {
		return nil, err
	}
	if a.HeartbeatTimeout != 0 {
		s.timeout = min(max(a.HeartbeatTimeout, MinHeartbeatTimeout), MaxHeartbeatTimeout)
	}
	hn, _ := os.Hostname()
	return HelloResult{Session: s.id, SSHServerIP: sshServerIP(os.Getenv("SSH_CONNECTION")), Version: s.o.Version,
		Hostname: hn, UID: os.Getuid(), StateDir: s.o.StateDir, HeartbeatTimeout: s.timeout, Cleanups: s.takeCleanups(a.Cleanup)}, nil
}

// versionDiffer starts the refusal of a peer of another version.
const versionDiffer = "redline versions differ"

// versionMismatch is the refusal of a peer of another version, said the
// same way by both sides.
func versionMismatch(session, client string) error {
	if session == client {
		return nil
	}
	return fmt.Errorf("%s: the session is %q, the client %q; the session protocol is the binary's version: run the same redline on both (--ssh copies it there unless --no-push or --ssh-sudo)",
		versionDiffer, session, client)
}

// IsVersionMismatch says whether err is either side's refusal of a peer
// of another version.
func IsVersionMismatch(err error) bool {
	return err != nil && strings.Contains(err.Error(), versionDiffer)
}

// sshServerIP is the server address of $SSH_CONNECTION ("client_ip
// client_port server_ip server_port"), or "" outside ssh.
func sshServerIP(conn string) string {
	f := strings.Fields(conn)
	if len(f) != 4 || net.ParseIP(f[2]) == nil {
		return ""
	}
	return f[2]
}

// reportedKeep is how long a cleanup that a hello has reported stays
// there for the client that waits for it by name (a lab learning what its
// lost session did).
const reportedKeep = 24 * time.Hour

// takeCleanups returns the saved cleanups of earlier sessions that no
// hello has reported yet, and the one of session want (asked for by the
// client whose session it was) even if another hello reported it first.
// A reported cleanup is kept, renamed, for reportedKeep: another client's
// hello must not take the report a lab is waiting for.
func (s *session) takeCleanups(want string) []Cleanup {
	if s.o.Worker { // no state directory
		return nil
	}
	dir := s.cleanupDir()
	var out []Cleanup
	names, _ := filepath.Glob(filepath.Join(dir, "cleanup-*.json"))
	if want != "" {
		if n := filepath.Join(dir, "reported-"+want+".json"); validCleanupName(want) && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		b, err := os.ReadFile(n)
		var c Cleanup
		if err != nil || json.Unmarshal(b, &c) != nil {
			if !os.IsNotExist(err) {
				os.Remove(n) // unreadable: nothing to report, ever
			}
			continue
		}
		out = append(out, c)
		if c.Session == want {
			os.Remove(n) // its client has it
		} else if strings.HasPrefix(filepath.Base(n), "cleanup-") {
			os.Rename(n, filepath.Join(dir, "reported-"+c.Session+".json"))
		}
	}
	old, _ := filepath.Glob(filepath.Join(dir, "reported-*.json"))
	for _, n := range old {
		if st, err := os.Stat(n); err == nil && time.Since(st.ModTime()) > reportedKeep {
			os.Remove(n)
		}
	}
	return out
}

// validCleanupName: a session id as newSessionID makes them, so a name
// from the client cannot leave the directory.
func validCleanupName(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r == '-') {
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
