// Package remote runs redline's host-side operations on another machine: a
// `redline session` on the server host speaks a small versioned JSON-lines
// protocol on its stdin and stdout, reached through the user's own OpenSSH
// client. SSH is the authentication; the session opens no port.
//
// The session carries the server-host API's typed operations (their
// names, arguments and validators are internal/serverhost's; this package
// sees opaque JSON and knows the protocol's version, hello, heartbeat and
// bye), accepts no command and no path from the client, and holds a dead
// man's switch: when its input ends, a signal arrives or the
// client's heartbeat stops, it rolls back every change it applied for the
// client and stops every redis-server it started, by itself.
package remote

import (
	"encoding/json"
	"time"

	"redline/internal/change"
	"redline/internal/steerspec"
)

// The session's own operations; the server-host API's are internal/serverhost's
// (protocol.go): this package carries their arguments and results as
// opaque JSON.
const (
	OpHello     = "hello"
	OpHeartbeat = "heartbeat"
	OpBye       = "bye"
)

// The protocol is the binary's version: a client and a session speak only
// to the same redline (Dial pushes this binary when the server host has
// another), so the wire types below, and the engine types the server-host
// API sends inside them, need no compatibility rules of their own. hello
// is the one exchange every version keeps: the session refuses a client of
// another version there, naming both (docs/remote.md says why).
//
// legacyProtocol is what a hello says in the "protocol" field that the
// sessions of redline versions before this rule (protocols 1 to 3) read:
// such a session answers it, and the client's version check then names
// both versions instead of failing on a protocol number.
const legacyProtocol = 3

// Request is one line from the client.
type Request struct {
	ID   uint64          `json:"id"`
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Response is one line from the session, answering the request with the
// same ID. Error is set when the operation failed; Result is then empty.
type Response struct {
	ID     uint64          `json:"id"`
	Error  string          `json:"error,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
}

// MaxLine bounds one protocol line (a plan, a snapshot): a longer one is an
// error, not an allocation the peer chooses.
const MaxLine = 64 << 20

// HelloArgs opens a session.
type HelloArgs struct {
	// Version is the client's redline version: the session refuses any
	// other than its own.
	Version string `json:"version"`
	// Protocol and MinProtocol are only for the sessions of redline
	// versions before the version became the protocol (legacyProtocol).
	Protocol    int `json:"protocol,omitempty"`
	MinProtocol int `json:"min_protocol,omitempty"`
	// Cleanup names an earlier session of this client's whose cleanup it
	// waits for: it is returned even when another hello reported it.
	Cleanup string `json:"cleanup,omitempty"`
	// HeartbeatTimeout is how long the session waits for any request
	// before it rolls back and exits (clamped to MinHeartbeatTimeout ..
	// MaxHeartbeatTimeout; DefaultHeartbeatTimeout when zero).
	HeartbeatTimeout time.Duration `json:"heartbeat_timeout,omitempty"`
}

// Heartbeat bounds and default.
const (
	MinHeartbeatTimeout     = time.Second
	MaxHeartbeatTimeout     = 10 * time.Minute
	DefaultHeartbeatTimeout = 30 * time.Second
)

// HelloResult is what the session says about itself.
type HelloResult struct {
	// Session names this session; a later hello's Cleanups carry it.
	Session string `json:"session,omitempty"`
	// SSHServerIP is the session host's address the SSH connection came
	// in on (from $SSH_CONNECTION), an address clients can reach it at.
	SSHServerIP string `json:"ssh_server_ip,omitempty"`
	Version     string `json:"version"`
	Hostname    string `json:"hostname"`
	UID         int    `json:"uid"`
	StateDir    string `json:"state_dir"`
	// HeartbeatTimeout is the timeout the session enforces.
	HeartbeatTimeout time.Duration `json:"heartbeat_timeout"`
	// Cleanups are what earlier sessions' dead man's switches restored
	// and stopped, not yet reported to any hello, and the one of the
	// session HelloArgs.Cleanup names.
	Cleanups []Cleanup `json:"cleanups,omitempty"`
}

// RedisServer is a server a session started.
type RedisServer struct {
	ID      string `json:"id"`
	Host    string `json:"host"`
	Port    int    `json:"port"`
	Pid     int    `json:"pid"`
	Dir     string `json:"dir"`
	LogPath string `json:"log_path"`
}

// ByeArgs ends a session.
type ByeArgs struct{}

// Cleanup is what a session restored and stopped when it ended.
type Cleanup struct {
	Session string    `json:"session"`
	Reason  string    `json:"reason"`
	Time    time.Time `json:"time"`
	// Restored are the scoped tune sessions rolled back, each with what
	// happened to every change.
	Restored []RestoredApply `json:"restored,omitempty"`
	// Stopped are the redis-servers stopped.
	Stopped []RedisServer `json:"stopped,omitempty"`
	// Benches counts the bench workers stopped.
	Benches int `json:"benches,omitempty"`
	// Steered are the steer sessions stopped (their IRQs restored).
	Steered []steerspec.Session `json:"steered,omitempty"`
	Errors  []string            `json:"errors,omitempty"`
}

// RestoredApply is one scoped apply's rollback: what happened to every
// change, as the lab records it.
type RestoredApply struct {
	TuneSession string        `json:"tune_session"`
	Steps       []change.Step `json:"steps,omitempty"`
}
