package labdata

import (
	"net"
	"strings"
	"time"

	"redline/internal/percent"
)

// Percent is a fraction written either as a number (0.03) or a
// percentage ("3%"): internal/percent, a leaf steerspec shares.
type Percent = percent.Value

// Scenario describes an experiment. It is read from YAML strictly (an
// unknown field or a bad value is an error with its line number).
type Scenario struct {
	Name        string `json:"name" yaml:"name"`
	Description string `json:"description,omitempty" yaml:"description,omitempty"`

	Target    TargetSpec     `json:"target" yaml:"target"`
	Server    ServerSpec     `json:"server,omitzero" yaml:"server,omitempty"`
	Client    ClientSpec     `json:"client,omitzero" yaml:"client,omitempty"`
	Workloads []WorkloadSpec `json:"workloads" yaml:"workloads"`
	Variants  []VariantSpec  `json:"variants" yaml:"variants"`

	// Repetitions fixes the runs per variant and test (the v2 lab's way);
	// without it the lab is sequential: from MinRuns to MaxRuns rounds,
	// until every comparison's interval is narrower than Precision or
	// Budget is spent. Alpha is the per-lab false-positive rate.
	Repetitions int           `json:"repetitions" yaml:"repetitions,omitempty"`
	MinRuns     int           `json:"min_runs,omitempty" yaml:"min_runs,omitempty"`
	MaxRuns     int           `json:"max_runs,omitempty" yaml:"max_runs,omitempty"`
	Precision   Percent       `json:"precision,omitempty" yaml:"precision,omitempty"`
	Budget      time.Duration `json:"budget,omitempty" yaml:"budget,omitempty"`
	Alpha       Percent       `json:"alpha,omitempty" yaml:"alpha,omitempty"`
	Warmup      time.Duration `json:"warmup,omitempty" yaml:"warmup,omitempty"`
	// RetryNoisy runs a run flagged as noisy once more; the noisy one
	// stays in the file, out of the statistics.
	RetryNoisy bool `json:"retry_noisy,omitempty" yaml:"retry_noisy,omitempty"`
	// Doctor runs the doctor before the baseline and records its findings.
	Doctor *bool `json:"doctor,omitempty" yaml:"doctor,omitempty"`
	// HostWide "allow" lets the variants make host-wide changes (sysctls
	// outside the server's network namespace, THP, IRQ affinities, CPU
	// frequency) while other redis-servers run on the host; without it the
	// lab leaves them out there.
	HostWide string `json:"host_wide,omitempty" yaml:"host_wide,omitempty"`
	// Profile records a CPU profile of the server (perf record -g) during
	// one repetition of every variant and test, the middle one of
	// min_runs, for the report's top functions and flame graphs.
	Profile bool `json:"profile,omitempty" yaml:"profile,omitempty"`
}

// TargetSpec says where the server is.
type TargetSpec struct {
	// Kind is "managed" (redline starts redis-server on loopback),
	// "managed-cluster" (a Redis Cluster of such servers), "netns"
	// (two network namespaces joined by a veth pair, server in one, load
	// from the other), "address" (an existing server) or "ssh" (the
	// server host is another machine, driven through a redline session
	// over ssh: a server started there, or an existing one by Port).
	Kind string `json:"kind" yaml:"kind"`
	// Address is the existing server (kind address: host:port) or, for
	// kind ssh, the server host's IP the load goes to (default: the
	// address the ssh connection reached).
	Address string `json:"address,omitempty" yaml:"address,omitempty"`
	// Host is the ssh destination of kind ssh: [user@]host or a Host of
	// the user's ssh config.
	Host string `json:"host,omitempty" yaml:"host,omitempty"`
	// Port is an existing server's port on the ssh host; without it the
	// lab starts its own server there.
	Port int `json:"port,omitempty" yaml:"port,omitempty"`
	// Heartbeat is how long the server host's session waits for the lab
	// before it rolls back and stops its server by itself (default 30s).
	Heartbeat time.Duration `json:"heartbeat,omitempty" yaml:"heartbeat,omitempty"`
	// NoPush refuses, rather than copies this redline there, when the
	// ssh host's redline is missing or another version; Sudo runs the
	// session as root with sudo -n (docs/remote.md).
	NoPush   bool   `json:"no_push,omitempty" yaml:"no_push,omitempty"`
	Sudo     bool   `json:"sudo,omitempty" yaml:"sudo,omitempty"`
	Password string `json:"-" yaml:"password,omitempty"`
	// PasswordFile holds the password on its first line (relative to the
	// scenario file), so the scenario itself need hold no secret.
	PasswordFile string `json:"password_file,omitempty" yaml:"password_file,omitempty"`
	User         string `json:"user,omitempty" yaml:"user,omitempty"`
	// Primaries and Replicas (per primary) size a "managed-cluster":
	// a Redis Cluster redline starts on loopback (default 3 primaries).
	// The server settings and every variant's apply to each node.
	Primaries int `json:"primaries,omitempty" yaml:"primaries,omitempty"`
	Replicas  int `json:"replicas,omitempty" yaml:"replicas,omitempty"`
	// Cluster marks an "address" target as a seed of a Redis Cluster:
	// the workloads run with --cluster.
	Cluster bool `json:"cluster,omitempty" yaml:"cluster,omitempty"`
	// Sysctls and ClientSysctls are a netns target's starting state: net.*
	// sysctls set inside its server's and its client's namespace before
	// the server starts (the host's own stay as they are), through tune
	// (allow-listed, read back); the result records them (TargetInfo).
	// A tuned variant's changes start from these values.
	Sysctls       map[string]string `json:"sysctls,omitempty" yaml:"sysctls,omitempty"`
	ClientSysctls map[string]string `json:"client_sysctls,omitempty" yaml:"client_sysctls,omitempty"`
	// Queues gives a netns target's veth that many queues, with GRO on
	// and TSO/GSO off, so its packets pass through NAPI like a
	// multi-queue NIC's (what redline steer follows); 0 is one queue.
	Queues int `json:"queues,omitempty" yaml:"queues,omitempty"`
}

// LoopbackHost reports whether host (a name or an address, no port)
// names this machine from wherever it is used: localhost and its
// subdomains, the loopback ranges, the unspecified addresses (0.0.0.0 and
// ::, which connect to the local host) and the short IPv4 forms inet_aton
// accepts ("127.1"). Names are not resolved.
func LoopbackHost(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	if ip := net.ParseIP(h); ip != nil {
		return ip.IsLoopback() || ip.IsUnspecified()
	}
	short := h != "" && strings.Trim(h, "0123456789.") == ""
	return short && (strings.HasPrefix(h, "127.") || h == "127" || strings.Trim(h, "0.") == "")
}

// ServerSpec configures a managed or netns server.
type ServerSpec struct {
	Binary string            `json:"binary,omitempty" yaml:"binary,omitempty"`
	Config []string          `json:"config,omitempty" yaml:"config,omitempty"`
	Env    map[string]string `json:"env,omitempty" yaml:"env,omitempty"`
	// Allocator preloads jemalloc, tcmalloc or mimalloc from the OS
	// packages (LD_PRELOAD); the lab checks the server really mapped it.
	Allocator string `json:"allocator,omitempty" yaml:"allocator,omitempty"`
	// CPUs pins the server (taskset-style cpulist); NUMANode binds its CPUs
	// and memory (numactl --cpunodebind --membind).
	CPUs     string `json:"cpus,omitempty" yaml:"cpus,omitempty"`
	NUMANode *int   `json:"numa_node,omitempty" yaml:"numa_node,omitempty"`
	// Build builds the server with redline build (docs/build.md) before
	// the lab starts; Built is what that build made, filled in then, and
	// it is the Binary the lab runs.
	Build *BuildSpec       `json:"build,omitempty" yaml:"build,omitempty"`
	Built *BuildProvenance `json:"built,omitempty" yaml:"-"`
}

// ClientSpec configures the load generator's placement.
type ClientSpec struct {
	CPUs string `json:"cpus,omitempty" yaml:"cpus,omitempty"`
	// Workers, when above 1, runs every measurement from this many local
	// load processes (bench --workers N): each a share of -c, -n and
	// --rate, a common start, results merged exactly, a line per worker
	// in each run's summary. The scenario's client only: every variant
	// is measured with the same load.
	Workers int `json:"workers,omitempty" yaml:"workers,omitempty"`
	// WorkerHosts runs every measurement from one worker on each of these
	// ssh destinations instead (bench --workers ssh:HOST,...), through a
	// redline session there; the server must be one they reach (a target
	// of kind ssh or address).
	WorkerHosts []string `json:"worker_hosts,omitempty" yaml:"worker_hosts,omitempty"`
	// Tool runs another program as the load: redis-benchmark (the
	// workload lines are its lines). The scenario's only, so a verdict
	// never compares two tools; redline's own bench is the default.
	Tool string `json:"tool,omitempty" yaml:"tool,omitempty"`
	// Env is the load program's extra environment (LD_PRELOAD=...), a
	// variant's added to the scenario's; it needs a Tool (redline's own
	// bench makes raw system calls: a preloaded library never sees them).
	Env map[string]string `json:"env,omitempty" yaml:"env,omitempty"`
}

// LoadWorkers is how many workers the load comes from: 0 for the lab's
// own process.
func (c ClientSpec) LoadWorkers() int {
	if len(c.WorkerHosts) > 0 {
		return len(c.WorkerHosts)
	}
	if c.Workers > 1 {
		return c.Workers
	}
	return 0
}

// WorkloadSpec is one load: redline bench options, or a redis-benchmark
// command line pasted verbatim.
type WorkloadSpec struct {
	Name  string `json:"name" yaml:"name"`
	Bench string `json:"bench" yaml:"bench"`
	// Sweep runs the workload once per value of one parameter of its line
	// (d, c, P or threads): {d: [3, 30, 300, 3000]}. Each value is a
	// workload of its own ("values[d=300]"); the report draws the metrics
	// against it.
	Sweep map[string][]string `json:"sweep,omitempty" yaml:"sweep,omitempty"`
	// Connect compares connection set-up too: connect p99, set-up time
	// and failed connects, with the same verdict as throughput (three
	// more comparisons per variant in the lab's error budget).
	Connect bool `json:"connect,omitempty" yaml:"connect,omitempty"`
}

// SweepParams maps a sweep's parameter to the bench flag that sets it.
var SweepParams = map[string]string{"d": "-d", "c": "-c", "P": "-P", "threads": "--threads"}

// VariantSpec is one arm of the experiment.
type VariantSpec struct {
	Name     string `json:"name" yaml:"name"`
	Baseline bool   `json:"baseline,omitempty" yaml:"baseline,omitempty"`
	// Tune applies host/Redis changes (journaled, rolled back after the
	// variant's runs): named profiles, a plan file, and/or the doctor's
	// safe fixes.
	Tune *TuneSpec `json:"tune,omitempty" yaml:"tune,omitempty"`
	// Server and Client override the scenario's for this variant; a
	// changed server is restarted.
	Server *ServerSpec `json:"server,omitempty" yaml:"server,omitempty"`
	Client *ClientSpec `json:"client,omitempty" yaml:"client,omitempty"`
	// Steer runs redline steer during the variant's runs (every IRQ it
	// moved is restored when they end).
	Steer *SteerSpec `json:"steer,omitempty" yaml:"steer,omitempty"`
}

// TuneSpec is what a tuned variant changes.
type TuneSpec struct {
	Profiles []string `json:"profiles,omitempty" yaml:"profiles,omitempty"`
	Plan     string   `json:"plan,omitempty" yaml:"plan,omitempty"`
	Doctor   bool     `json:"doctor,omitempty" yaml:"doctor,omitempty"`
	// Restart restarts a managed or netns server after the changes are
	// applied (and again after they are rolled back), for settings read
	// only when the server starts listening, such as net.core.somaxconn.
	// Redis settings changed by CONFIG SET do not survive the restart: put
	// them in the variant's server config instead.
	Restart bool `json:"restart,omitempty" yaml:"restart,omitempty"`
}
