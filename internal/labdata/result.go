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

// ResultSchema names the layout of a lab results file. v2 records the
// planned runs, and comparisons that follow stats.Compare's minimum-runs
// rule ("too few runs", no interval); v1 files are still read (Upgrade).
const (
	ResultSchema   = "redline.lab/v2"
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

	Host   HostFacts  `json:"host"`
	Target TargetInfo `json:"target"`

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
	// Comparisons are each variant against the baseline, per workload.
	Comparisons []Comparison `json:"comparisons,omitempty"`
}

// PlannedRuns is the lab's plan of measurements: repetitions x variants x
// tests (a "-t set,get" workload is two tests, so two run workloads).
type PlannedRuns struct {
	Total  int            `json:"total"`
	Groups []PlannedGroup `json:"groups,omitempty"`
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
	Notes     []string `json:"notes,omitempty"`
}

// TargetInfo says which server was measured and how the load reached it.
type TargetInfo struct {
	Kind          string `json:"kind"` // managed, netns, address
	Address       string `json:"address"`
	ServerVersion string `json:"server_version,omitempty"`
	Binary        string `json:"binary,omitempty"`
	Topology      string `json:"topology,omitempty"` // e.g. "loopback", "veth between netns rl-srv and rl-cli"
	// Logs are the managed server's logs, one per start, kept next to
	// the results.
	Logs []string `json:"logs,omitempty"`
}

// Finding is a doctor finding as the report shows it.
type Finding struct {
	ID       string   `json:"id"`
	Severity string   `json:"severity"`
	Title    string   `json:"title"`
	Message  string   `json:"message,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
	Fix      []string `json:"fix,omitempty"` // commands or advice
}

// VariantInfo is one variant as run.
type VariantInfo struct {
	Name        string     `json:"name"`
	Baseline    bool       `json:"baseline,omitempty"`
	Description string     `json:"description,omitempty"`
	Plan        []PlanStep `json:"plan,omitempty"`
	// Server holds the server settings that differ from the scenario's,
	// for server variants (config lines, environment, CPU layout).
	Server     []string `json:"server,omitempty"`
	RolledBack bool     `json:"rolled_back,omitempty"`
	Notes      []string `json:"notes,omitempty"`
}

// PlanStep is one change of a variant's plan and what happened to it.
type PlanStep struct {
	Change change.Change `json:"change"`
	Old    string        `json:"old,omitempty"`
	Status string        `json:"status"` // applied, skipped, refused, restored, drifted
	Note   string        `json:"note,omitempty"`
}

// Run is one measurement: a workload under a variant, one repetition.
type Run struct {
	Seq      int                `json:"seq"`
	Variant  string             `json:"variant"`
	Workload string             `json:"workload"`
	Rep      int                `json:"rep"`
	Summary  *benchdata.Summary `json:"summary"`
	// ServerCPU is the server's CPU seconds (user+sys) during the run, and
	// ServerCPUPerRequest the same per request in microseconds.
	ServerCPU           float64 `json:"server_cpu_seconds,omitempty"`
	ServerCPUPerRequest float64 `json:"server_cpu_us_per_request,omitempty"`
}

// Comparison is a variant against the baseline for one workload and
// metric.
type Comparison struct {
	Workload string `json:"workload"`
	Variant  string `json:"variant"`
	Baseline string `json:"baseline"`
	Metric   string `json:"metric"` // "rps" or "p99_ms"
	// HigherIsBetter is true for throughput, false for latency.
	HigherIsBetter bool    `json:"higher_is_better"`
	N              int     `json:"n"`
	BaselineN      int     `json:"baseline_n"`
	Median         float64 `json:"median"`
	BaselineMedian float64 `json:"baseline_median"`
	Min            float64 `json:"min"`
	Max            float64 `json:"max"`
	// Ratio is median/baseline median; CILow and CIHigh bound it with 95%
	// confidence (bootstrap of the ratio of medians) when HasCI; with
	// fewer than stats.MinRuns runs a side there is no interval.
	Ratio   float64 `json:"ratio"`
	CILow   float64 `json:"ci_low,omitempty"`
	CIHigh  float64 `json:"ci_high,omitempty"`
	HasCI   bool    `json:"has_ci"`
	Verdict string  `json:"verdict"` // stats.LabWords, or "too few runs"
}
