// Package serverhost is the server-host API: every operation redline does
// on the machine that runs Redis (snapshot, doctor, tune, redis
// start/stop/attach, sample, steer), written once, with two
// implementations: Local runs them in this process, Remote asks a
// `redline session` on another machine over ssh, and that session answers
// by calling a Local (Serve). Commands and the lab open a Host once (Open)
// and use nothing else, so whether an operation runs here or there is
// decided in one place.
package serverhost

import (
	"cmp"
	"context"
	"io/fs"
	"time"

	"redline/internal/bench"
	"redline/internal/doctor"
	"redline/internal/host"
	"redline/internal/remote"
	"redline/internal/steerspec"
	"redline/internal/tune"
)

// Host is one server host.
type Host interface {
	// Info says which host this is.
	Info() Info
	// Snapshot reads the host's model (redline inspect).
	Snapshot(ctx context.Context, a SnapshotArgs) (*host.Snapshot, error)
	// Doctor runs the rules against the host and, unless a.Redis is nil,
	// its server (or cluster).
	Doctor(ctx context.Context, a DoctorArgs) (*doctor.Report, error)
	Tuner
	Servers
	// Sample reads the host's counters now, served as its /proc: CPU
	// time, softirqs, interrupts, softnet and the threads of the servers
	// this Host started or attached.
	Sample(ctx context.Context) (fs.FS, error)
	Steerer
	Builder
	// Close ends the host: it stops the steers, rolls back the scoped
	// applies and stops the servers this Host started, in that order, and
	// says what it did.
	Close(ctx context.Context) (*remote.Cleanup, error)
}

// Tuner applies plans behind the host's journal.
type Tuner interface {
	// TunePreview says what applying p would do (redis: the server its
	// redis-config changes go to, with its password; nil for the plan's).
	TunePreview(ctx context.Context, p *tune.Plan, redis *RedisTarget) (outcomes []tune.Outcome, warnings []string, err error)
	// TuneVerify compares p's values with the live ones.
	TuneVerify(ctx context.Context, p *tune.Plan, redis *RedisTarget) ([]tune.Outcome, error)
	// TuneApply applies p, journaled, for as long as scope says. The
	// result is set even when the apply failed (it rolled back what it
	// applied).
	TuneApply(ctx context.Context, p *tune.Plan, redis *RedisTarget, scope Scope) (*tune.ApplyResult, error)
	// TuneKeep makes the scoped apply of journal session id permanent.
	TuneKeep(ctx context.Context, id string) error
	// TuneRollback rolls back journaled changes; the result is set even
	// when some values could not be restored.
	TuneRollback(ctx context.Context, a TuneRollbackArgs) (*tune.RollbackResult, error)
	// TuneStatus says where the journaled changes stand.
	TuneStatus(ctx context.Context, redisPassword string) (*tune.StatusReport, error)
}

// Scope is how long an apply lasts.
type Scope int

const (
	// Kept applies stay until a rollback (redline tune apply). On a
	// server host the apply is scoped until it has answered, so a link
	// lost mid-apply makes the session there undo it, as Ctrl-C does
	// here.
	Kept Scope = iota
	// Scoped applies last as long as the Host: Close rolls them back
	// unless TuneKeep kept them (the lab's variants).
	Scoped
)

// Servers starts, stops and attaches redis-servers on the host.
type Servers interface {
	// RedisStart starts a managed redis-server, stopped by Close.
	RedisStart(ctx context.Context, a RedisStartArgs) (remote.RedisServer, error)
	// RedisStop stops a server RedisStart started (and a steer running for
	// it) and returns the end of its log.
	RedisStop(ctx context.Context, id string) (logTail string, err error)
	// RedisAttach checks an existing server and samples its process from
	// then on; it is never stopped.
	RedisAttach(ctx context.Context, r RedisTarget) (RedisAttached, error)
	// RedisNodes lists the nodes of the Redis Cluster r belongs to
	// (primaries and replicas; none for a server not in cluster mode), as
	// the host reaches them.
	RedisNodes(ctx context.Context, r RedisTarget) ([]string, error)
}

// Steerer runs redline steer for one of the host's servers.
type Steerer interface {
	// SteerStart starts steer for the server with pid (one this Host
	// started or attached), its moves journaled.
	SteerStart(ctx context.Context, spec steerspec.Spec, pid int) (id string, err error)
	// SteerStop stops it, restoring every IRQ it moved; the record is
	// filled in even when the restore fails.
	SteerStop(ctx context.Context, id string) (steerspec.Session, error)
}

// Workers runs bench workers on the host (bench --workers, the lab's
// worker hosts): a worker's prepare with its ready barrier, clock, start,
// result and stop are bench.Worker's methods. Remote implements it
// through the session's bench.* operations (NewBenchWorker), which the
// session answers with the in-process workers (workers.go); local
// workers are the same operations on a `redline session --worker`
// child (remote.LocalWorker, ServeWorker).
type Workers interface {
	BenchWorker(spec bench.WorkerSpec) (bench.Worker, error)
}

// Info says which host a Host is.
type Info struct {
	// Hostname is the name the host gives itself.
	Hostname string
	// UID is the user the host's operations run as (0: root, which
	// writes to /proc and /sys need).
	UID int
	// SSH is the ssh destination of a remote host; "" for this machine.
	SSH string
	// Session names the remote session (its cleanup reports carry it).
	Session string
	// SSHServerIP is the host's address the ssh connection came in on.
	SSHServerIP string
	// HeartbeatTimeout is how long a remote session waits for the client
	// before it cleans up by itself.
	HeartbeatTimeout time.Duration
	// Cleanups are what earlier sessions there restored and stopped by
	// themselves.
	Cleanups []remote.Cleanup
}

// Name is the host as the user knows it: the ssh destination they gave,
// or this machine's name.
func (i Info) Name() string { return cmp.Or(i.SSH, i.Hostname) }

// Where is how messages name the host: "" for this machine, else "on
// NAME".
func (i Info) Where() string {
	if i.SSH == "" {
		return ""
	}
	return "on " + i.Hostname
}
