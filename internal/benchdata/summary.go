// Package benchdata holds what a benchmark run produces and others read:
// Summary, the --json Document, and the HDR Histogram they carry. It is a
// leaf: reports and lab results import it without linking the load
// generator.
package benchdata

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// MaxLatency is the histograms' ceiling: one hour, against
// redis-benchmark's silent 3 s clamp.
const MaxLatency = time.Hour

// SchemaVersion names the JSON layout of Summary; it changes when a field
// changes meaning or disappears (adding fields keeps it).
const SchemaVersion = "redline.bench.summary/v1"

// Summary is what one test measured. Lab results are lists of Summaries
// with labels; reports read only these. Latencies are in milliseconds; the
// histograms record nanoseconds.
type Summary struct {
	Schema      string    `json:"schema"`
	Title       string    `json:"title"`
	Command     string    `json:"command"`
	Label       string    `json:"label,omitempty"`
	CommandLine []string  `json:"command_line,omitempty"`
	Config      RunConfig `json:"config"`

	Start          time.Time `json:"start"`
	End            time.Time `json:"end"`
	ElapsedSeconds float64   `json:"elapsed_seconds"`

	Requests     int64            `json:"requests"`
	Errors       int64            `json:"errors"`
	ErrorsByType map[string]int64 `json:"errors_by_type,omitempty"`
	RPS          float64          `json:"rps"`

	// Latency is per request: from the moment it was written (closed loop)
	// or was due to be written (--rate) to the read that completed its
	// reply. Uncorrected, in rate mode, is timed from the actual write.
	Latency              Latency    `json:"latency_ms"`
	Uncorrected          *Latency   `json:"uncorrected_latency_ms,omitempty"`
	Histogram            *Histogram `json:"histogram,omitempty"`
	UncorrectedHistogram *Histogram `json:"uncorrected_histogram,omitempty"`

	Commands []CommandResult `json:"commands,omitempty"`

	// Connections is how the connections were set up.
	Connections *Connections `json:"connections,omitempty"`

	// Workers is set with --workers: each load process's own figures;
	// the fields above are their exact merge.
	Workers []WorkerResult `json:"workers,omitempty"`
	// WorkersFailed is how many of Workers sent no result: the figures
	// above miss their load (partial), the Config is what was asked.
	WorkersFailed int `json:"workers_failed,omitempty"`

	// Cluster is set with --cluster: per node figures and redirections.
	Cluster *Cluster `json:"cluster,omitempty"`

	// Drain is set in rate mode with a duration: what was still due or
	// outstanding when the duration ended, and how it was drained.
	Drain *Drain `json:"drain,omitempty"`

	// Failover is set with --reconnect: the failures the run counted and
	// went on through, per second and as outages. Errors and
	// ErrorsByType above then count the failed requests.
	Failover *Failover `json:"failover,omitempty"`

	Server ServerInfo `json:"server"`
	Client ClientInfo `json:"client"`

	Interrupted bool `json:"interrupted,omitempty"`
	// StoppedDuring is set when a stop came before the test measured
	// anything: what the run was doing ("reading the server's INFO",
	// "starting the workers", "connecting"); Requests is then 0.
	StoppedDuring string `json:"stopped_during,omitempty"`
	Error         string `json:"error,omitempty"`
}

// RunConfig is the configuration a Summary was measured with.
type RunConfig struct {
	Target       string  `json:"target"`
	TLS          bool    `json:"tls,omitempty"`
	Clients      int     `json:"clients"`
	Requests     int64   `json:"requests"`
	DurationSec  float64 `json:"duration_seconds,omitempty"`
	WarmupSec    float64 `json:"warmup_seconds,omitempty"`
	Pipeline     int     `json:"pipeline"`
	Threads      int     `json:"threads"`
	KeepAlive    bool    `json:"keepalive"`
	KeySpace     uint64  `json:"keyspace,omitempty"`
	KeyDist      string  `json:"key_distribution,omitempty"`
	PayloadBytes int     `json:"payload_bytes"`
	ValueSizes   string  `json:"value_sizes,omitempty"`
	Rate         float64 `json:"rate,omitempty"`
	ConnectRate  float64 `json:"connect_rate,omitempty"`
	DB           int     `json:"db,omitempty"`
	RESP3        bool    `json:"resp3,omitempty"`
	Precision    int     `json:"precision"`
	Seed         uint64  `json:"seed"`
}

// Connections is how a run's connections were set up. Connect is from
// connect() to established (with TLS: to the end of the TLS handshake);
// Ready is from connect() to the reply to the last set-up command
// (AUTH, CLIENT TRACKING, SELECT, HELLO), the same as Connect when there
// are none. Both count every connection made, -k 0 reconnects included.
type Connections struct {
	Opened int64 `json:"opened"`
	// SetupSeconds is from the first connect() to all -c connections
	// ready, before the measurement starts.
	SetupSeconds     float64    `json:"setup_seconds"`
	Connect          Latency    `json:"connect_ms"`
	Ready            Latency    `json:"ready_ms"`
	ConnectHistogram *Histogram `json:"connect_histogram,omitempty"`
	ReadyHistogram   *Histogram `json:"ready_histogram,omitempty"`
	// Failures counts failed connects by errno name (ECONNREFUSED,
	// ETIMEDOUT, EADDRNOTAVAIL, ...; "timeout" for no answer within
	// --timeout). Retries counts those dialled again (--connect-retries);
	// a failed connect not retried ends the run.
	Failures map[string]int64 `json:"failures,omitempty"`
	Retries  int64            `json:"retries,omitempty"`
	// PerSecond is connections opened per second of the measurement, set
	// when connections are made during it (-k 0, --connect-rate).
	PerSecond float64 `json:"per_second,omitempty"`
	// Kernel is what the kernel counted meanwhile; nil when nothing could
	// be read.
	Kernel *NetEvidence `json:"kernel,omitempty"`
}

// NetEvidence is the kernel's side of a run's connections: counters read
// before the first connect and after the last reply (before the
// connections close), in the server's network namespace when its host is
// readable (local, or the lab's netns target) and in the load's.
// Counters are per namespace: they include every other socket's there.
type NetEvidence struct {
	Server *ServerNet `json:"server,omitempty"`
	Client *ClientNet `json:"client,omitempty"`
	// Problems are one line each, with the cause and the fix: a listen
	// queue that overflowed, a SYN queue that fell back to cookies, local
	// ports that ran out.
	Problems []string `json:"problems,omitempty"`
}

// ServerNet is the server namespace's counters, as deltas over the run
// (/proc/net/netstat TcpExt, /proc/net/snmp Tcp), and its somaxconn.
type ServerNet struct {
	NetNS           string `json:"netns,omitempty"` // "" the load generator's own
	Somaxconn       *int64 `json:"somaxconn,omitempty"`
	ListenOverflows uint64 `json:"listen_overflows"`
	ListenDrops     uint64 `json:"listen_drops"`
	SyncookiesSent  uint64 `json:"syncookies_sent"`
	ReqQFullDrops   uint64 `json:"reqq_full_drops"`
	PassiveOpens    uint64 `json:"passive_opens"`
}

// ClientNet is the load namespace's side: connects started and failed
// over the run (/proc/net/snmp Tcp ActiveOpens, AttemptFails), and, at the
// end, the TCP sockets in TIME_WAIT and the ephemeral ports in use
// (sock_diag) against net.ipv4.ip_local_port_range.
type ClientNet struct {
	NetNS          string `json:"netns,omitempty"`
	ActiveOpens    uint64 `json:"active_opens"`
	AttemptFails   uint64 `json:"attempt_fails"`
	TimeWait       int    `json:"time_wait"`
	EphemeralInUse int    `json:"ephemeral_ports_in_use"`
	PortRange      [2]int `json:"port_range,omitzero"`
	TWReuse        *int64 `json:"tcp_tw_reuse,omitempty"`
}

// Overflowed reports whether the server's listen queue dropped connects.
func (e *NetEvidence) Overflowed() bool {
	return e != nil && e.Server != nil && e.Server.ListenOverflows+e.Server.ListenDrops > 0
}

// Drain is the end of an open-loop (--rate) run with a duration. Requests
// due before the end are sent however late and awaited, up to a limit;
// the figures above then include them. What the limit cut off is counted
// here and in no latency figure.
type Drain struct {
	LimitSeconds float64 `json:"limit_seconds"`
	// Seconds is from the end of the duration to the last reply (0 when
	// everything was answered before the end).
	Seconds float64 `json:"seconds"`
	// LateAtEnd were due before the end and not yet sent when it came
	// (every connection was at --max-pending); OutstandingAtEnd were sent
	// and not yet answered.
	LateAtEnd        int64 `json:"late_at_end"`
	OutstandingAtEnd int64 `json:"outstanding_at_end"`
	// Unsent and Unanswered are what the limit cut off: due before the
	// end but never sent, and sent but never answered.
	Unsent     int64 `json:"unsent,omitempty"`
	Unanswered int64 `json:"unanswered,omitempty"`
}

// Expired reports whether the limit cut requests off.
func (d *Drain) Expired() bool { return d != nil && d.Unsent+d.Unanswered > 0 }

// Latency is a latency digest in milliseconds.
type Latency struct {
	Avg   float64 `json:"avg"`
	Min   float64 `json:"min"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99_9"`
	P9999 float64 `json:"p99_99"`
	Max   float64 `json:"max"`
}

// CommandResult is one command's share of a mixed workload.
type CommandResult struct {
	Name      string     `json:"name"`
	Requests  int64      `json:"requests"`
	RPS       float64    `json:"rps"`
	Latency   Latency    `json:"latency_ms"`
	Histogram *Histogram `json:"histogram,omitempty"`
}

// ServerInfo is what the server said about itself before the run.
type ServerInfo struct {
	Version    string            `json:"version,omitempty"`
	Mode       string            `json:"mode,omitempty"`
	OS         string            `json:"os,omitempty"`
	Allocator  string            `json:"allocator,omitempty"`
	Config     map[string]string `json:"config,omitempty"`
	ConfigErr  string            `json:"config_error,omitempty"`
	ProcessID  int               `json:"process_id,omitempty"`
	IOThreads  string            `json:"io_threads,omitempty"`
	Executable string            `json:"executable,omitempty"`
}

// ClientInfo records where the load came from.
type ClientInfo struct {
	Redline  string `json:"redline"`
	Go       string `json:"go"`
	Hostname string `json:"hostname"`
	Kernel   string `json:"kernel,omitempty"`
	CPUs     int    `json:"cpus"`
}

// Histogram is an HDR histogram of nanoseconds that serialises to the
// standard compressed, base64 form ("HISTFAAA..."), which other HDR tools
// read and which merges losslessly.
type Histogram struct{ *hdr.Histogram }

// NewHistogram returns an empty histogram covering 1 ns to MaxLatency with
// the given significant figures.
func NewHistogram(precision int) *Histogram {
	return &Histogram{hdr.New(1, int64(MaxLatency), precision)}
}

// MarshalJSON encodes the histogram.
func (h *Histogram) MarshalJSON() ([]byte, error) {
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil, fmt.Errorf("encode histogram: %w", err)
	}
	return json.Marshal(string(b))
}

// UnmarshalJSON decodes the histogram.
func (h *Histogram) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if _, err := base64.StdEncoding.DecodeString(s); err != nil {
		return fmt.Errorf("histogram is not base64: %w", err)
	}
	d, err := hdr.Decode([]byte(s))
	if err != nil {
		return fmt.Errorf("decode histogram: %w", err)
	}
	h.Histogram = d
	return nil
}

// Digest summarises h in milliseconds, with redis-benchmark's rules:
// percentiles are highest equivalent values, the mean uses median
// equivalent values.
func Digest(h *hdr.Histogram) Latency {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}
	}
	ms := func(v int64) float64 { return float64(v) / 1e6 }
	return Latency{
		Avg:   h.Mean() / 1e6,
		Min:   ms(h.Min()),
		P50:   ms(h.ValueAtPercentile(50)),
		P90:   ms(h.ValueAtPercentile(90)),
		P95:   ms(h.ValueAtPercentile(95)),
		P99:   ms(h.ValueAtPercentile(99)),
		P999:  ms(h.ValueAtPercentile(99.9)),
		P9999: ms(h.ValueAtPercentile(99.99)),
		Max:   ms(h.Max()),
	}
}

// Cluster is a --cluster run's view per primary, so a hot shard shows.
// The per-node histograms merge into the run's Histogram exactly.
type Cluster struct {
	Nodes []NodeResult `json:"nodes"`
	// Moved and Asked count the MOVED and ASK redirections followed; a
	// redirected request is counted once in Requests, timed from its
	// first send. Refreshes counts topology reloads (one per burst of
	// MOVED).
	Moved     int64 `json:"moved"`
	Asked     int64 `json:"asked"`
	Refreshes int64 `json:"topology_refreshes"`
}

// NodeResult is what one node answered.
type NodeResult struct {
	Addr string `json:"addr"`
	ID   string `json:"id,omitempty"`
	// Role is "primary" or "replica" (--read-from-replicas); a replica
	// names its Primary and has no Slots of its own.
	Role      string     `json:"role"`
	Primary   string     `json:"primary,omitempty"`
	Slots     int        `json:"slots"`
	Replicas  int        `json:"replicas"`
	Requests  int64      `json:"requests"`
	RPS       float64    `json:"rps"`
	Latency   Latency    `json:"latency_ms"`
	Histogram *Histogram `json:"histogram,omitempty"`
}

// WorkerResult is one load process's share of a --workers run: its
// figures over its own interval, so an overloaded client shows. Worker
// and Host are its identity as the run numbered and reached it, kept
// when it failed (then Error says how, and its figures are what it
// reported, or zero).
type WorkerResult struct {
	Worker    int        `json:"worker"`
	Host      string     `json:"host,omitempty"`
	Clients   int        `json:"clients"`
	Requests  int64      `json:"requests"`
	RPS       float64    `json:"rps"`
	Latency   Latency    `json:"latency_ms"`
	Histogram *Histogram `json:"histogram,omitempty"`
	// Start and End are its measurement's, on the coordinator's clock.
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
	// Clock is how the worker's clock compared with the coordinator's
	// when the start was given; nil when it was not measured.
	Clock *WorkerClock `json:"clock,omitempty"`
	// Kernel is the worker's own connection evidence: its host's
	// counters, never summed with another host's.
	Kernel *NetEvidence `json:"kernel,omitempty"`
	Error  string       `json:"error,omitempty"`
}

// WorkerClock is a worker host's clock against the coordinator's,
// measured over the link as NTP does (the best of several round trips):
// OffsetMS is the worker's clock minus the coordinator's, known to within
// half of RTTMS. The common start is sent as a delay, so it does not
// depend on the clocks agreeing; the offset places the worker's
// timestamps on the coordinator's clock in the merge.
type WorkerClock struct {
	OffsetMS float64 `json:"offset_ms"`
	RTTMS    float64 `json:"rtt_ms"`
	// StartDelayMS is the delay the worker was told to start after.
	StartDelayMS float64 `json:"start_delay_ms"`
	// LateMS is how long after the common start the worker started,
	// when its start message arrived too late to wait (by its round
	// trip); 0 when it started on time.
	LateMS float64 `json:"late_ms,omitempty"`
}

// Failover is what a --reconnect run went through. Kinds are "refused",
// "reset" (the server closed or reset the connection), "timeout" (no reply
// within --timeout), "LOADING", "READONLY", "MASTERDOWN", "TRYAGAIN",
// "CLUSTERDOWN" (the server's error replies) and "other" (another connect
// error).
type Failover struct {
	// FailedRequests are requests that got no reply (their connection
	// failed) or a failover error reply; they are in no latency figure.
	FailedRequests int64 `json:"failed_requests"`
	// FailedConnects are connects (or reconnects) that failed.
	FailedConnects int64 `json:"failed_connects"`
	// Reconnects are connections set up again after a failure.
	Reconnects int64 `json:"reconnects"`
	// Switches counts the moves to a new primary (--sentinel: the
	// address Sentinel gave changed; --cluster: slot map refreshes).
	Switches int64 `json:"switches,omitempty"`
	// Primary is the last primary's address with --sentinel.
	Primary string `json:"primary,omitempty"`
	// Seconds are the seconds of the measurement that saw a failure:
	// Second 0 is the first second after the measurement started.
	Seconds []FailureSecond `json:"seconds,omitempty"`
	// Outages are the spans of failures: see Outage.
	Outages []Outage `json:"outages,omitempty"`
}

// FailureSecond is one second of a --reconnect run that saw failures.
type FailureSecond struct {
	Second int   `json:"second"`
	OK     int64 `json:"ok"` // requests answered in that second
	// Failures by kind: requests failed and connects failed.
	Failures map[string]int64 `json:"failures"`
}

// Outage is a span of failures: from the first failure to the first
// successful reply after the last one (failures less than a second apart
// belong to one outage). Offsets are seconds since the measurement
// started.
type Outage struct {
	StartSeconds float64 `json:"start_seconds"`
	EndSeconds   float64 `json:"end_seconds"`
	Seconds      float64 `json:"seconds"`
	// FirstSecond and LastSecond are the first and last whole seconds
	// (as in Failover.Seconds) that saw one of its failures.
	FirstSecond int `json:"first_second"`
	LastSecond  int `json:"last_second"`
	// Recovered is false when the run ended before a request succeeded
	// after it: End is then its last failure.
	Recovered      bool             `json:"recovered"`
	FailedRequests int64            `json:"failed_requests"`
	Failures       map[string]int64 `json:"failures"`
	// Straddled are the successful requests in flight across it: sent
	// (or, with --rate, due) before it ended and answered after it began.
	// Their latency, in ms, is in the figures above too.
	Straddled      int64   `json:"straddled"`
	StraddledP50Ms float64 `json:"straddled_p50_ms,omitempty"`
	StraddledP99Ms float64 `json:"straddled_p99_ms,omitempty"`
	StraddledMaxMs float64 `json:"straddled_max_ms,omitempty"`
	// StraddledHistogram holds the straddled requests' latencies (ns), so
	// a --workers run's outages merge with exact percentiles.
	StraddledHistogram *Histogram `json:"straddled_histogram,omitempty"`
}
