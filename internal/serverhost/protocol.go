package serverhost

import (
	"encoding/json"
	"time"

	"redline/internal/buildspec"
	"redline/internal/steerspec"
)

// The server-host API's vocabulary: its operations' names and argument
// and result types. internal/remote carries them as opaque JSON (it knows
// the protocol's version, hello, heartbeat and bye, not these); adding an
// operation adds its name and types here and its entry in operations
// (serve.go), and nothing in remote.

// The server-host API's operations: what a session answers besides the
// transport's own (hello, heartbeat, bye). Anything else is an error
// reply. Each has its entry in the handler's table (operations).
const (
	OpSnapshot     = "snapshot"
	OpDoctor       = "doctor"
	OpTunePreview  = "tune.preview"
	OpTuneApply    = "tune.apply"
	OpTuneKeep     = "tune.keep"
	OpTuneRollback = "tune.rollback"
	OpTuneStatus   = "tune.status"
	OpTuneVerify   = "tune.verify"
	OpRedisStart   = "redis.start"
	OpRedisStop    = "redis.stop"
	OpRedisAttach  = "redis.attach"
	OpRedisNodes   = "redis.nodes"
	OpSample       = "sample"
	OpSteerStart   = "steer.start"
	OpSteerStop    = "steer.stop"
	OpBuild        = "build"
	// One share of a bench --workers run, with its ready barrier
	// (serverhost/workers.go).
	OpBenchClock   = "bench.clock"
	OpBenchPrepare = "bench.prepare"
	OpBenchStart   = "bench.start"
	OpBenchResult  = "bench.result"
	OpBenchStop    = "bench.stop"
)

// RedisTarget is a Redis server on the session's host. The password
// travels only in the protocol, never on a command line or in a log.
type RedisTarget struct {
	Network  string `json:"network,omitempty"` // "tcp" (default) or "unix"
	Addr     string `json:"addr"`
	User     string `json:"user,omitempty"`
	Password string `json:"password,omitempty"`
}

// SnapshotArgs asks for the session host's model (redline inspect).
type SnapshotArgs struct {
	PIDs        []int    `json:"pids,omitempty"`
	Ports       []int    `json:"ports,omitempty"`
	IRQPatterns []string `json:"irq_patterns,omitempty"`
	NoProcesses bool     `json:"no_processes,omitempty"`
}

// DoctorArgs asks for a doctor report of the session host (and a server
// on it). The result is doctor's JSON report.
type DoctorArgs struct {
	Redis   *RedisTarget  `json:"redis,omitempty"`
	Pid     int           `json:"pid,omitempty"`
	Iface   string        `json:"iface,omitempty"`
	Clients int           `json:"clients,omitempty"`
	Sample  time.Duration `json:"sample,omitempty"`
	Only    []string      `json:"only,omitempty"`
	Skip    []string      `json:"skip,omitempty"`
	// IRQPatterns are extra queue-IRQ naming rules (inspect's --irq-pattern).
	IRQPatterns []string `json:"irq_patterns,omitempty"`
	// Cluster is doctor's --cluster: nil detects a cluster node.
	Cluster *bool `json:"cluster,omitempty"`
	// ClusterAuthAny is doctor's --cluster-auth-any
	// (doctor.GatherOptions.ClusterAuthAny).
	ClusterAuthAny bool `json:"cluster_auth_any,omitempty"`
	// HostOnlyFallback checks the host alone when the server cannot be
	// reached (nobody named it: the default address).
	HostOnlyFallback bool `json:"host_only_fallback,omitempty"`
	// Timeout bounds connecting to Redis and each command (the admin
	// connection's default when zero).
	Timeout time.Duration `json:"timeout,omitempty"`
	// Intrinsic measures the host's intrinsic latency this long,
	// saturating one core: this machine only, a session refuses it.
	Intrinsic time.Duration `json:"intrinsic,omitempty"`
}

// TuneApplyArgs applies a plan on the session host behind its journal.
type TuneApplyArgs struct {
	// Plan is the plan as JSON; it is decoded as strictly as a plan file.
	Plan json.RawMessage `json:"plan"`
	// Redis overrides the plan's server for redis-config changes and
	// carries its password.
	Redis *RedisTarget `json:"redis,omitempty"`
	// Scoped makes the change last only as long as the session: the
	// session rolls it back when it ends, whether by bye or by its dead
	// man's switch (the lab's variants). Unscoped applies stay, as a
	// local `redline tune apply` does.
	Scoped bool `json:"scoped,omitempty"`
}

// TuneKeepArgs makes a scoped apply permanent: the session no longer rolls
// it back when it ends. redline tune apply --ssh applies scoped and keeps
// once the apply has answered, so a link lost during the apply undoes it,
// as Ctrl-C does locally.
type TuneKeepArgs struct {
	Session string `json:"session"`
}

// TuneRollbackArgs rolls back journaled changes (redline tune rollback).
type TuneRollbackArgs struct {
	Session       string `json:"session,omitempty"`
	Last          bool   `json:"last,omitempty"`
	DryRun        bool   `json:"dry_run,omitempty"`
	RedisPassword string `json:"redis_password,omitempty"`
	// Exclusive takes the state directory for the rollback's length: it
	// refuses while a long-running redline (a lab, steer, autotune) holds
	// it and will roll back its own changes (redline tune rollback).
	Exclusive bool `json:"exclusive,omitempty"`
}

// TuneStatusArgs asks where the journaled changes stand.
type TuneStatusArgs struct {
	RedisPassword string `json:"redis_password,omitempty"`
}

// RedisStartArgs starts a managed redis-server on the session host: a free
// port (or Port), its own directory, its log kept; stopped when the
// session ends.
type RedisStartArgs struct {
	Bind string `json:"bind,omitempty"` // an IP address of the session host; default 127.0.0.1
	Port int    `json:"port,omitempty"`
	// Config are redis.conf lines; only the performance directives of
	// redisparam.Check are accepted.
	Config []string `json:"config,omitempty"`
	// CPUs pins the server (taskset -c), a CPU list such as "2-3".
	CPUs string `json:"cpus,omitempty"`
	// Password sets requirepass; it goes into the server's redis.conf
	// (in the server's own directory, mode 0700), never onto a command line.
	Password string `json:"password,omitempty"`
	// NUMANode binds the server's CPUs and memory (numactl).
	NUMANode *int `json:"numa_node,omitempty"`
	// Allocator preloads jemalloc, tcmalloc or mimalloc from the session
	// host's packages; the session checks the server mapped it.
	Allocator string `json:"allocator,omitempty"`
	// Binary is another redis-server: an absolute path named
	// redis-server*, which a root session runs only if root owns it and
	// nobody else can write it (see validateBinary).
	Binary string `json:"binary,omitempty"`
}

// BuildArgs builds a redis-server on the session host (redline build
// --ssh, a lab's server.build on an ssh target), in the session host's
// own build cache: the client names neither the cache nor a program.
type BuildArgs struct {
	// Spec is checked as a local build's is, and more: a compiler by name
	// only, found in a root-owned directory; a source that is debian or
	// a tarball or tree root owns (redisbuild.CheckSession).
	Spec buildspec.Spec `json:"spec"`
	// Jobs is make's -j (0: the session host's CPUs).
	Jobs int `json:"jobs,omitempty"`
	// Workload trains a PGO build whose spec names none (a lab's first
	// workload).
	Workload string `json:"workload,omitempty"`
}

// BuildResult is a build's answer: the provenance (its paths are the
// session host's), or why there is none. Refused is a spec the session
// does not build (its rules, or a compiler this host lacks): the user's
// to fix, like a bad flag; Error is a build that failed (its log and tree
// kept there).
type BuildResult struct {
	Provenance *buildspec.Provenance `json:"provenance,omitempty"`
	Refused    string                `json:"refused,omitempty"`
	Error      string                `json:"error,omitempty"`
}

// RedisAttachArgs names an existing server on the session host whose
// process the session then samples (it is never stopped or restarted).
// Attaching is also what lets the later operations reach it: a session
// connects only to the servers it started or attached (a TCP server on
// an address of its host; under sudo, a unix socket the invoking user
// could connect to).
type RedisAttachArgs struct {
	Redis RedisTarget `json:"redis"`
	// AdmitOnly only checks the server and admits it for the later
	// operations (a doctor's, a plan's): no connection now, no process to
	// sample (a server in a container is fine).
	AdmitOnly bool `json:"admit_only,omitempty"`
}

// RedisNodesArgs asks for the nodes of the Redis Cluster a server
// belongs to (none for a server not in cluster mode).
type RedisNodesArgs struct {
	Redis RedisTarget `json:"redis"`
}

// RedisAttached is the attached server: its pid (checked to be a
// redis-server process of the session host) and version.
type RedisAttached struct {
	Pid     int    `json:"pid"`
	Version string `json:"version,omitempty"`
}

// RedisStopArgs stops a server the session started.
type RedisStopArgs struct {
	ID string `json:"id"`
}

// RedisStopResult is what stopping a server left behind.
type RedisStopResult struct {
	// LogTail is the end of the server's log.
	LogTail string `json:"log_tail,omitempty"`
}

// SteerStartArgs starts redline steer on the session host for one of the
// session's servers (one it started, or attached): a lab's steer variant
// against a server host. The session stops it (restoring every IRQ it
// moved) when asked, and by itself when the session ends for any reason.
type SteerStartArgs struct {
	Spec steerspec.Spec `json:"spec"`
	Pid  int            `json:"pid"`
}

// SteerStarted names a running steer for steer.stop.
type SteerStarted struct {
	ID string `json:"id"`
}

// SteerStopArgs stops a steer the session started.
type SteerStopArgs struct {
	ID string `json:"id"`
}

// SteerStopResult is what the steer did; Error is set when its restore
// failed (the moves stay journaled for redline tune rollback there).
type SteerStopResult struct {
	Session steerspec.Session `json:"session"`
	Error   string            `json:"error,omitempty"`
}
