package report

import (
	"redline/internal/stats"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"redline/internal/benchdata"
	"redline/internal/labdata"
)

// ReportSchema names the layout of the JSON a report renders to.
const ReportSchema = "redline.report/v1"

// Report is what redline report renders: the variants of one lab result,
// or runs from several files merged into one comparison, as a table of
// workloads (rows) by labels (columns: variants, kernels, value sizes...).
type Report struct {
	Schema string `json:"schema"`
	Title  string `json:"title"`
	// Dimension names what the labels are: "variant", or the --by name.
	Dimension string `json:"dimension"`
	// Reference is the label every other label is compared against.
	Reference string      `json:"reference"`
	Labels    []string    `json:"labels"`
	Workloads []*Workload `json:"workloads"`
	Runs      []*Sample   `json:"runs"`
	Inputs    []InputInfo `json:"sources"`
	// Notes are the caveats a reader must see: incomplete runs, runs left
	// out of the statistics, comparisons the report had to compute.
	Notes []string `json:"notes,omitempty"`

	// Lab is the result a single-result report describes in full
	// (findings, plans, host); nil for a merged report.
	Lab *labdata.Result `json:"-"`
	// markComputed marks comparisons the report computed (a lab result
	// normally carries its own).
	markComputed bool
	// design is the error budget of the comparisons the report computes.
	design stats.Design
	// resultDir is the lab result's directory, where its profiles' flame
	// graphs are ("" when unknown).
	resultDir string
}

// Workload is one row: a workload (and, in a merge, whatever else tells
// rows apart) measured under each label.
type Workload struct {
	Name string `json:"name"`
	// Commands are the distinct command lines the row's runs were
	// measured with (one, unless a merge pools different ones).
	Commands []string `json:"commands,omitempty"`
	Groups   []*Group `json:"groups"`
}

// Group is the runs of one workload under one label.
type Group struct {
	Label     string `json:"label"`
	Reference bool   `json:"reference,omitempty"`
	// N counts the runs in the statistics; LeftOut those that were
	// interrupted, failed or carry no summary.
	N       int `json:"n"`
	LeftOut int `json:"left_out,omitempty"`
	// Files counts the input files the runs came from (merged reports).
	Files      int    `json:"files,omitempty"`
	Throughput Spread `json:"rps"`
	P99        Spread `json:"p99_ms"`
	// Latency is read from the HDR histograms of the group's runs merged
	// into one (HistogramRuns of them carried one).
	Latency       *benchdata.Latency `json:"merged_latency_ms,omitempty"`
	HistogramRuns int                `json:"histogram_runs"`
	Curve         []CurvePoint       `json:"-"`
	Requests      int64              `json:"requests"`
	Errors        int64              `json:"errors"`
	// ServerCPUPerRequest is the median over runs that measured it.
	ServerCPUPerRequest *float64 `json:"server_cpu_us_per_request,omitempty"`
	VsThroughput        *Versus  `json:"rps_vs_reference,omitempty"`
	VsP99               *Versus  `json:"p99_vs_reference,omitempty"`
	// Steadiness is the run-to-run spread of the throughput: the relative
	// difference between successive runs (stats.PairSpreads); VsSpread
	// compares it with the reference's (lower is steadier).
	Steadiness Spread  `json:"rps_run_spread"`
	VsSpread   *Versus `json:"rps_run_spread_vs_reference,omitempty"`

	samples  []*Sample
	rps, p99 []float64
	merged   *hdr.Histogram
}

// Versus is a group against the reference group of its row.
type Versus struct {
	N    int `json:"n"`
	RefN int `json:"reference_n"`
	// Ratio is the label's value divided by the reference's
	// (stats.Compare), for every metric: stats' one convention.
	// CILow..CIHigh its interval at confidence 1-Level when HasCI.
	// HigherIsBetter says which way is better for the metric, and Change
	// says it in words ("9.5% worse"), as every output prints it.
	Ratio          float64 `json:"ratio"`
	HigherIsBetter bool    `json:"higher_is_better"`
	Change         string  `json:"change"`
	CILow          float64 `json:"ci_low,omitempty"`
	CIHigh         float64 `json:"ci_high,omitempty"`
	HasCI          bool    `json:"has_ci"`
	Level          float64 `json:"level,omitempty"`
	Verdict        string  `json:"verdict"`
	// Reason says why there is no claim, when the lab recorded one.
	Reason string `json:"reason,omitempty"`
	// ComputedBy is "lab" when the lab recorded the comparison, "report"
	// when redline report computed it from the runs.
	ComputedBy string `json:"computed_by"`
}

// Sample is one run as the report shows it.
type Sample struct {
	// Index numbers the runs of the report from 1; Seq is the run's own
	// sequence number in its file.
	Index    int    `json:"index"`
	Source   string `json:"source"`
	Label    string `json:"label"`
	Row      string `json:"row"`
	Seq      int    `json:"seq"`
	Variant  string `json:"variant,omitempty"`
	Workload string `json:"workload"`
	Rep      int    `json:"rep"`

	RPS                 float64           `json:"rps"`
	Latency             benchdata.Latency `json:"latency_ms"`
	Requests            int64             `json:"requests"`
	Errors              int64             `json:"errors"`
	ServerCPUPerRequest float64           `json:"server_cpu_us_per_request,omitempty"`
	// Noise and Series are what the lab recorded of the host during the
	// run and of the run second by second (lab v3 results only).
	Noise  *labdata.Noise   `json:"noise,omitempty"`
	Series []labdata.Second `json:"series,omitempty"`
	// Sweep is the point of a swept workload the run measured.
	Sweep *labdata.SweepPoint `json:"sweep,omitempty"`
	Start time.Time           `json:"start,omitzero"`
	// Problem says why the run is left out of the statistics ("" when it
	// is in).
	Problem string `json:"left_out,omitempty"`

	summary *benchdata.Summary
	command string
	fromLab bool
}

// InputInfo is the provenance of one input file.
type InputInfo struct {
	File          string    `json:"file"`
	Label         string    `json:"label,omitempty"`
	Kind          string    `json:"kind"`
	Schema        string    `json:"schema"`
	Redline       string    `json:"redline_version,omitempty"`
	CommandLine   []string  `json:"command_line,omitempty"`
	Started       time.Time `json:"started,omitzero"`
	Finished      time.Time `json:"finished,omitzero"`
	Complete      bool      `json:"complete"`
	Error         string    `json:"error,omitempty"`
	Hostname      string    `json:"hostname,omitempty"`
	Kernel        string    `json:"kernel,omitempty"`
	CPUs          int       `json:"cpus,omitempty"`
	ServerVersion string    `json:"server_version,omitempty"`
	Target        string    `json:"target,omitempty"`
	Runs          int       `json:"runs"`
}

// problemOf says why a run cannot count, or "".
func problemOf(sum *benchdata.Summary) string {
	switch {
	case sum == nil:
		return "no summary recorded"
	case sum.Interrupted:
		return "interrupted"
	case sum.Error != "":
		return "failed: " + sum.Error
	case sum.RPS <= 0:
		return "no throughput recorded"
	}
	return ""
}

// newSample fills the measured fields of s from sum.
func newSample(s *Sample, sum *benchdata.Summary) *Sample {
	s.summary = sum
	s.Problem = problemOf(sum)
	if sum == nil {
		return s
	}
	s.RPS, s.Latency, s.Requests, s.Errors, s.Start = sum.RPS, sum.Latency, sum.Requests, sum.Errors, sum.Start
	return s
}
