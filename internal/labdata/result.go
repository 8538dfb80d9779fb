// Package labdata is the schema of a lab results file (result.json): what
// the lab engine writes and the report reads. It is a leaf: it imports no
// engine, so a renderer can read results without linking the doctor, tune
// or the lab.
package labdata

import (
	"time"

	"redline/internal/benchdata"
	"redline/internal/change"
)

// ResultSchema names the layout of a lab results file. v3 records the
// sequential design (Sequential), each comparison's level and the reason
// when it makes no claim, and per-run noise; v2 recorded the planned runs
// and the minimum-runs rule; v1 and v2 files are still read (Upgrade).
const (
	ResultSchema   = "redline.lab/v3"
	ResultSchemaV2 = "redline.lab/v2"
	ResultSchemaV1 = "redline.lab/v1"
)

// Result is everything one lab run measured, with its provenance. It is
// written to disk after every measurement, so a crash keeps what was done
// (Complete is false until the end).
type Result struct {
	Schema       string    `json:"schema"`
	Redline      string    `json:"redline_version"`
	CommandLine  []string  `json:"command_line"`
	ScenarioFile string    `json:"scenario_file,omitempty"`
	Scenario     Scenario  `json:"scenario"`
	Started      time.Time `json:"started"`
	Finished     time.Time `json:"finished,omitzero"`
	Complete     bool      `json:"complete"`
	Error        string    `json:"error,omitempty"`

	// Host is the machine the lab ran on (the client); ServerHost the
	// server's, when it is another (a target of kind ssh).
	Host       HostFacts  `json:"host"`
	ServerHost *HostFacts `json:"server_host,omitempty"`
	Target     TargetInfo `json:"target"`
	// RemoteCleanup is what the server host's session restored and
	// stopped by itself after the link to the lab was lost.
	RemoteCleanup *RemoteCleanup `json:"remote_cleanup,omitempty"`
	// HostCheck compares this host's host-wide values (sysctls, THP, IRQ
	// affinities, CPU governors) at the end with those at the start:
	// "host restored", or what differs. OtherServers are the redis-servers
	// that ran on this host before the lab started its own.
	HostCheck    string   `json:"host_check,omitempty"`
	OtherServers []string `json:"other_servers,omitempty"`
	// HostWide lists, before the first change, the host-wide changes the
	// variants make and how often, and whether the lab made them.
	HostWide []string `json:"host_wide,omitempty"`

	// Findings are the doctor's findings before any change.
	Findings []Finding `json:"findings,omitempty"`
	// Variants describes each variant as it was run: its plan and what
	// applying and rolling it back did.
	Variants []VariantInfo `json:"variants"`
	// Runs are every measurement, in the order they were taken.
	Runs []Run `json:"runs"`
	// Planned is how many runs the scenario asked for, counting each test
	// of a workload; absent in v1 files.
	Planned *PlannedRuns `json:"planned_runs,omitempty"`
	// Sequential is how the lab decided how many runs to take and the
	// error budget of its verdicts; absent before v3.
	Sequential *Sequential `json:"sequential,omitempty"`
	// Comparisons are each variant against the baseline, per workload.
	Comparisons []Comparison `json:"comparisons,omitempty"`
	// Sampling says what was sampled on the server host during runs.
	Sampling *Sampling `json:"sampling,omitempty"`
}

// Sequential is the lab's design: it runs rounds (every variant runs every
// test once) from MinRuns to MaxRuns, examines the runs at the planned
// Looks, and stops when every interval is narrower than Precision, when
// the next round would not fit in Budget, or at MaxRuns. Alpha, the chance
// that a lab of identical variants claims anything, is split evenly over
// Comparisons and Looks, which gives each interval its Level.
type Sequential struct {
	MinRuns     int           `json:"min_runs"`
	MaxRuns     int           `json:"max_runs"`
	Precision   float64       `json:"precision"`
	Budget      time.Duration `json:"budget_ns,omitempty"`
	Alpha       float64       `json:"alpha"`
	Comparisons int           `json:"comparisons"`
	Looks       []int         `json:"looks"`
	Level       float64       `json:"level"`
	// RunsNeeded is the fewest runs a side (rounds, when Paired) that can
	// make a claim at Level.
	RunsNeeded int `json:"runs_needed"`
	// Paired labs compare throughput and p99 round by round (the runs of
	// one round paired; stats.ComparePaired), and run each round's
	// variants in an order drawn from Seed and the round's number.
	Paired bool   `json:"paired,omitempty"`
	Seed   uint64 `json:"seed,omitempty"`
	// Rounds is how many rounds ran; LooksTaken the run counts examined.
	Rounds     int   `json:"rounds"`
	LooksTaken []int `json:"looks_taken,omitempty"`
	// Stopped says why the lab stopped: StopPrecise, StopBudget,
	// StopMaxRuns, StopInterrupted or StopFailed.
	Stopped string `json:"stopped,omitempty"`
}

// Why a lab stopped taking runs.
const (
	StopPrecise     = "every interval within the precision"
	StopBudget      = "time budget spent"
	StopMaxRuns     = "maximum runs reached"
	StopInterrupted = "interrupted"
	StopFailed      = "a run or a tuning step failed"
)

// PlannedRuns is the lab's plan of measurements: rounds x variants x
// tests (a "-t set,get" workload is two tests, so two run workloads).
// Total and each group's Runs count the most the lab may take (MaxRuns
// rounds); MinTotal the fewest (v3).
type PlannedRuns struct {
	Total    int            `json:"total"`
	MinTotal int            `json:"min_total,omitempty"`
	Groups   []PlannedGroup `json:"groups,omitempty"`
}

// PlannedGroup is the runs planned for one variant on one run workload
// (the names Run.Variant and Run.Workload carry).
type PlannedGroup struct {
	Variant  string `json:"variant"`
	Workload string `json:"workload"`
	Runs     int    `json:"runs"`
}

// HostFacts is the short description of the machine a report prints.
type HostFacts struct {
	Hostname  string   `json:"hostname"`
	Kernel    string   `json:"kernel"`
	Arch      string   `json:"arch"`
	CPUModel  string   `json:"cpu_model,omitempty"`
	CPUs      int      `json:"cpus"`
	NUMANodes int      `json:"numa_nodes"`
	MemoryMiB int64    `json:"memory_mib,omitempty"`
	Virtual   string   `json:"virtualization,omitempty"`
	NICs      []string `json:"nics,omitempty"` // "eth0 virtio_net node -1 queues 1"
	// IRQMap is where each physical NIC queue's interrupt is delivered:
	// "eth0 rx-0: irq 35 -> CPUs 0-1 (node 0)".
	IRQMap []string `json:"irq_map,omitempty"`
	Notes  []string `json:"notes,omitempty"`
}

// RemoteCleanup is what a server host's session undid by itself when the
// lab's link to it ended (its dead man's switch), as the next session
// there reported it.
type RemoteCleanup struct {
	Reason   string     `json:"reason"`
	Time     time.Time  `json:"time,omitzero"`
	Restored []PlanStep `json:"restored,omitempty"`
	Stopped  []string   `json:"stopped,omitempty"` // "redis-server pid 123 port 40123"
	Errors   []string   `json:"errors,omitempty"`
	// Unknown says why the lab could not learn what happened there.
	Unknown string `json:"unknown,omitempty"`
}

// TargetInfo says which server was measured and how the load reached it.
type TargetInfo struct {
	Kind    string `json:"kind"` // managed, netns, address, ssh
	Address string `json:"address"`
	// SSH is the ssh destination of kind ssh, ServerHostname the name the
	// server host gave itself, Session its redline session.
	SSH            string `json:"ssh,omitempty"`
	ServerHostname string `json:"server_hostname,omitempty"`
	Session        string `json:"session,omitempty"`
	ServerVersion  string `json:"server_version,omitempty"`
	Binary         string `json:"binary,omitempty"`
	Topology       string `json:"topology,omitempty"` // e.g. "loopback", "veth between netns rl-srv and rl-cli"
	// Logs are the managed server's logs, one per start, kept next to
	// the results.
	Logs []string `json:"logs,omitempty"`
	// StartState is what a netns target's namespaces were given before
	// the server started (TargetSpec.Sysctls, ClientSysctls): each
	// change, the value it replaced and its status.
	StartState []PlanStep `json:"start_state,omitempty"`
}

// Finding is a doctor finding as the report shows it.
type Finding struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	// Node is the cluster node the finding is about ("127.0.0.1:7001
	// (primary, shard 2)"); empty for the host, a single server, or the
	// cluster as a whole.
	Node     string   `json:"node,omitempty"`
	Title    string   `json:"title"`
	Message  string   `json:"message,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
	Fix      []string `json:"fix,omitempty"` // commands or advice
	// Scratch says why the finding is about the lab's own scratch server
	// (a port or a setting the lab chose for it), not the host under
	// test; such a finding's fix is not among the doctor's safe fixes.
	Scratch string `json:"scratch,omitempty"`
}

// VariantInfo is one variant as run.
type VariantInfo struct {
	Name        string     `json:"name"`
	Baseline    bool       `json:"baseline,omitempty"`
	Description string     `json:"description,omitempty"`
	Plan        []PlanStep `json:"plan,omitempty"`
	// Server holds the server settings that differ from the scenario's,
	// for server variants (config lines, environment, CPU layout).
	Server []string `json:"server,omitempty"`
	// Build is what redline build made of the variant's server: {build}.
	Build      *BuildProvenance `json:"build,omitempty"`
	RolledBack bool             `json:"rolled_back,omitempty"`
	Notes      []string         `json:"notes,omitempty"`
	// Steer is what redline steer did in each round of a steer variant.
	Steer []SteerSession `json:"steer,omitempty"`
}

// PlanStep is one change of a variant's plan and what happened to it
// (change.Step, which the server-host API shares).
type PlanStep = change.Step

// Run is one measurement: a workload under a variant, one repetition.
type Run struct {
	Seq      int                `json:"seq"`
	Variant  string             `json:"variant"`
	Workload string             `json:"workload"`
	Rep      int                `json:"rep"`
	Summary  *benchdata.Summary `json:"summary"`
	// Tool is the program that measured the run when it was not
	// redline's own bench (client.tool).
	Tool *LoadTool `json:"tool,omitempty"`
	// ServerCPU is the server's CPU seconds (user+sys) during the run, and
	// ServerCPUPerRequest the same per request in microseconds.
	ServerCPU           float64 `json:"server_cpu_seconds,omitempty"`
	ServerCPUPerRequest float64 `json:"server_cpu_us_per_request,omitempty"`
	// Noise is what else happened on the host during the run (v3).
	Noise *Noise `json:"noise,omitempty"`
	// Retried marks a noisy run the lab ran again (retry_noisy): it stays
	// in the file and out of the statistics.
	Retried bool `json:"retried,omitempty"`
	// Series is the run's throughput and p99 second by second (v3).
	Series []Second `json:"series,omitempty"`
	// Sweep is the point of a swept workload this run measured (v3).
	Sweep *SweepPoint `json:"sweep,omitempty"`
	// Breakdown is where the server host's time went during the run
	// (/proc before and after it); absent when the lab could not read the
	// server host's /proc (Result.Sampling says why).
	Breakdown *Breakdown `json:"breakdown,omitempty"`
	// Profile is the run's CPU profile, for the one profiled repetition
	// of each variant (scenario profile: true).
	Profile *RunProfile `json:"profile,omitempty"`
}

// SweepPoint is one value of a workload's swept parameter: Workload is
// the workload's own name (the run's is "name[param=value]...").
type SweepPoint struct {
	Workload string `json:"workload"`
	Param    string `json:"param"`
	Value    string `json:"value"`
}

// Noise is what else happened on the host while a run measured.
type Noise struct {
	// OutsideCPU is the share of the host's CPU time spent by neither the
	// server nor redline (the load generator); Steal the share the
	// hypervisor took (/proc/stat and the two processes' own times).
	OutsideCPU float64 `json:"outside_cpu"`
	Steal      float64 `json:"steal"`
	// MHz is the mean current CPU frequency, when the host exposes it.
	MHz float64 `json:"mhz,omitempty"`
	// ServerCPUs and ClientCPUs are the CPUs the server's and the load's
	// threads ran on (sampled every 100 ms); SharedCPU the share of
	// samples in which a server thread and a load thread had just run on
	// the same CPU.
	ServerCPUs []int   `json:"server_cpus,omitempty"`
	ClientCPUs []int   `json:"client_cpus,omitempty"`
	SharedCPU  float64 `json:"shared_cpu"`
	// Noisy says why the run is flagged (outside load or steal above the
	// lab's thresholds), "" when it is not.
	Noisy string `json:"noisy,omitempty"`
}

// Second is one second of a run.
type Second struct {
	RPS float64 `json:"rps"`
	P99 float64 `json:"p99_ms"`
}

// Comparison is a variant against the baseline for one workload and
// metric.
type Comparison struct {
	Workload string `json:"workload"`
	Variant  string `json:"variant"`
	Baseline string `json:"baseline"`
	// Metric is "rps", "p99_ms" or "rps_spread" (v3: the relative
	// difference between successive runs, stats.PairSpreads; lower is
	// steadier); for a workload with connect: true also "connect_p99_ms",
	// "setup_s" (lower is better) and "connect_success" (the share of
	// connects that succeeded, higher is better).
	Metric string `json:"metric"`
	// HigherIsBetter is true for throughput, false for latency.
	HigherIsBetter bool    `json:"higher_is_better"`
	N              int     `json:"n"`
	BaselineN      int     `json:"baseline_n"`
	Median         float64 `json:"median"`
	BaselineMedian float64 `json:"baseline_median"`
	Min            float64 `json:"min"`
	Max            float64 `json:"max"`
	// Ratio is the variant against the baseline (v3: the median of the
	// ratios of every pair of runs; v1 and v2: median/baseline median);
	// CILow and CIHigh bound it at confidence 1-Level when HasCI (v3: exact
	// Mann-Whitney interval; before: 95% bootstrap). Without enough runs
	// for an interval there is none.
	Ratio   float64 `json:"ratio"`
	CILow   float64 `json:"ci_low,omitempty"`
	CIHigh  float64 `json:"ci_high,omitempty"`
	HasCI   bool    `json:"has_ci"`
	Level   float64 `json:"level,omitempty"`
	Verdict string  `json:"verdict"` // stats.LabWords, or "too few runs"
	// Reason says why a comparison makes no claim (v3).
	Reason string `json:"reason,omitempty"`
	// Paired: the interval is of the ratios of runs of the same round
	// (exact Wilcoxon signed-rank); N and BaselineN are the rounds both
	// sides ran.
	Paired bool `json:"paired,omitempty"`
}

// ServerFacts are the facts of the machine the server ran on: ServerHost
// when that was another machine than the lab's, else Host.
func (r *Result) ServerFacts() HostFacts {
	if r.ServerHost != nil {
		return *r.ServerHost
	}
	return r.Host
}
