package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"redline/internal/change"
	"redline/internal/labdata"
)

// metric is one compared quantity (named once, in labdata.Metrics) with
// how a report reads and prints it; every format walks this table.
type metric struct {
	labdata.Metric
	unit   string
	spread func(*Group) Spread
	versus func(*Group) *Versus
	format func(float64) string
	// minRuns is the fewest runs a group needs for the metric to have a
	// value: the run-to-run spread needs two.
	minRuns int
}

// has reports whether g has a value of m.
func (m metric) has(g *Group) bool { return g != nil && g.N > 0 && g.N >= m.minRuns }

// shownMetrics are the metrics some group of r has a value of: a report of
// one run (one bench file) has no run-to-run spread, not a spread of 0.0%.
func shownMetrics(r *Report) []metric {
	var out []metric
	for _, m := range metrics {
		if slices.ContainsFunc(r.Workloads, func(w *Workload) bool { return slices.ContainsFunc(w.Groups, m.has) }) {
			out = append(out, m)
		}
	}
	return out
}

var metrics = []metric{
	{labdata.MetricRPS, "requests/s",
		func(g *Group) Spread { return g.Throughput }, func(g *Group) *Versus { return g.VsThroughput }, fmtRPS, 1},
	{labdata.MetricP99, "ms",
		func(g *Group) Spread { return g.P99 }, func(g *Group) *Versus { return g.VsP99 }, fmtMs, 1},
	{labdata.MetricSpread, "%",
		func(g *Group) Spread { return g.Steadiness }, func(g *Group) *Versus { return g.VsSpread }, fmtShare, 2},
}

// fmtShare prints a fraction as a percentage: 0.031 is 3.1%.
func fmtShare(v float64) string { return strconv.FormatFloat(100*v, 'f', 1, 64) + "%" }

// runColumn is one column of the runs table.
type runColumn struct {
	header string
	align  byte
	value  func(*Sample) string
}

// runColumns picks the runs table's columns: a lab result shows its
// sequence numbers and variants, a merge its files and labels.
func runColumns(r *Report) []runColumn {
	var cols []runColumn
	if r.Lab != nil {
		cols = append(cols, runColumn{"seq", 'r', func(s *Sample) string { return itoa(s.Seq) }},
			runColumn{"variant", 'l', func(s *Sample) string { return s.Variant }})
	} else {
		cols = append(cols, runColumn{"#", 'r', func(s *Sample) string { return itoa(s.Index) }},
			runColumn{"file", 'l', func(s *Sample) string { return s.Source }},
			runColumn{r.Dimension, 'l', func(s *Sample) string { return s.Label }})
	}
	return append(cols, measuredColumns...)
}

var measuredColumns = []runColumn{
	{"workload", 'l', func(s *Sample) string { return s.Row }},
	{"rep", 'r', func(s *Sample) string { return itoa(s.Rep) }},
	{"rps", 'r', func(s *Sample) string { return fmtRPS(s.RPS) }},
	{"p50 ms", 'r', func(s *Sample) string { return fmtMs(s.Latency.P50) }},
	{"p99 ms", 'r', func(s *Sample) string { return fmtMs(s.Latency.P99) }},
	{"server CPU µs/req", 'r', func(s *Sample) string { return cpuOf(s) }},
	{"errors", 'r', func(s *Sample) string { return fmtRPS(float64(s.Errors)) }},
	{"note", 'l', func(s *Sample) string { return s.Problem }},
}

func cpuOf(s *Sample) string {
	if s.ServerCPUPerRequest <= 0 {
		return "n/a"
	}
	return strconv.FormatFloat(s.ServerCPUPerRequest, 'f', 2, 64)
}

// severityRank orders findings, most severe first; unknown names last.
var severityRank = map[string]int{"critical": 0, "high": 1, "medium": 2, "warning": 2, "low": 3, "info": 4}

// findingsBySeverity groups findings under their severities, most severe
// first, keeping the doctor's order within a severity.
func findingsBySeverity(fs []labdata.Finding) (order []string, by map[string][]labdata.Finding) {
	by = map[string][]labdata.Finding{}
	for _, f := range fs {
		sev := strings.ToLower(orDefault(f.Severity, "unknown"))
		if by[sev] == nil {
			order = append(order, sev)
		}
		by[sev] = append(by[sev], f)
	}
	slices.SortStableFunc(order, func(a, b string) int { return rankOf(a) - rankOf(b) })
	return order, by
}

func rankOf(sev string) int {
	if r, ok := severityRank[sev]; ok {
		return r
	}
	return len(severityRank)
}

// hostRows are the host facts as label/value pairs, absent ones left out.
func hostRows(h labdata.HostFacts) [][2]string {
	rows := [][2]string{
		{"host", h.Hostname}, {"kernel", h.Kernel}, {"arch", h.Arch}, {"CPU", h.CPUModel},
		{"CPUs", nonZero(h.CPUs)}, {"NUMA nodes", nonZero(h.NUMANodes)},
		{"memory", mib(h.MemoryMiB)}, {"virtualization", h.Virtual},
	}
	for _, n := range h.NICs {
		rows = append(rows, [2]string{"NIC", n})
	}
	for _, q := range h.IRQMap {
		rows = append(rows, [2]string{"queue IRQ", q})
	}
	return present(rows)
}

// hostTitle names the lab's host: the host, or the client's when the
// server ran on another machine.
func hostTitle(res *labdata.Result) string {
	if res.ServerHost != nil {
		return "Client host (the lab's)"
	}
	return "Host"
}

// remoteCleanupLines say what a server host's session undid by itself
// after the lab's link to it was lost.
func remoteCleanupLines(rc *labdata.RemoteCleanup) []string {
	if rc == nil {
		return nil
	}
	if rc.Unknown != "" {
		return []string{"unknown: " + rc.Unknown}
	}
	out := []string{"why: " + rc.Reason}
	for _, s := range rc.Restored {
		out = append(out, fmt.Sprintf("%s %s: %s to %q", s.Change.Kind, s.Change.Target, s.Status, s.Old))
	}
	for _, s := range rc.Stopped {
		out = append(out, "stopped "+s)
	}
	for _, e := range rc.Errors {
		out = append(out, "error: "+e)
	}
	return out
}

// targetRows describe the server measured and the scenario's settings.
func targetRows(res *labdata.Result) [][2]string {
	t, sc := res.Target, res.Scenario
	rows := [][2]string{
		{"kind", t.Kind}, {"address", t.Address}, {"ssh", t.SSH}, {"server host", t.ServerHostname}, {"session there", t.Session},
		{"server version", t.ServerVersion},
		{"binary", t.Binary}, {"topology", t.Topology},
		{"repetitions", nonZero(sc.Repetitions)}, {"warm-up", durationOf(sc)},
		{"server config", strings.Join(sc.Server.Config, "; ")}, {"server env", envOf(sc.Server.Env)},
		{"server CPUs", sc.Server.CPUs}, {"client CPUs", sc.Client.CPUs}, {"load", loadOf(sc.Client)},
	}
	if sc.Server.NUMANode != nil {
		rows = append(rows, [2]string{"server NUMA node", itoa(*sc.Server.NUMANode)})
	}
	return present(rows)
}

// loadOf describes where the load came from, when not one process.
func loadOf(c labdata.ClientSpec) string {
	if len(c.WorkerHosts) > 0 {
		hosts := strings.Join(c.WorkerHosts, ",")
		return fmt.Sprintf("a worker on each of %s (bench --workers ssh:%s): common start, histograms merged exactly; each run's summary has a line per worker", hosts, hosts)
	}
	if c.Workers < 2 {
		return ""
	}
	return fmt.Sprintf("%d local worker processes (bench --workers %d): common start, histograms merged exactly; each run's summary has a line per worker", c.Workers, c.Workers)
}

func durationOf(sc labdata.Scenario) string {
	if sc.Warmup == 0 {
		return ""
	}
	return sc.Warmup.String()
}

func envOf(env map[string]string) string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		keys[i] = k + "=" + env[k]
	}
	return strings.Join(keys, " ")
}

func present(rows [][2]string) [][2]string {
	return slices.DeleteFunc(rows, func(r [2]string) bool { return r[1] == "" })
}

func nonZero(n int) string {
	if n == 0 {
		return ""
	}
	return itoa(n)
}

func mib(n int64) string {
	if n == 0 {
		return ""
	}
	return fmtRPS(float64(n)) + " MiB"
}

// planRow is one plan step as the report prints it.
func planRow(i int, st labdata.PlanStep) []string {
	c := st.Change
	return []string{itoa(i + 1), string(c.Kind), planTarget(c), planOld(st) + " → " + c.Value, c.Why, c.Rule, st.Status, st.Note}
}

// planOld is a step's old value: an empty value tune read (an empty
// ip_local_reserved_ports) is shown as empty, as tune shows it; "?" only
// where the old value was never read (refused, skipped, planned).
func planOld(st labdata.PlanStep) string {
	if st.Old != "" || !slices.Contains(oldValueRead, st.Status) {
		return orDefault(st.Old, "?")
	}
	return st.Change.Show("")
}

// oldValueRead are the step statuses (tune.Status) whose old value tune
// read before writing, so that an empty Old is the value, not a gap.
var oldValueRead = []string{"applied", "unchanged", "intended", "failed", "restored", "drift", "gone", "restore-failed"}

// planTarget is a step's target, with the cluster node a Redis setting
// went to: "hz on 127.0.0.1:7001".
func planTarget(c change.Change) string {
	if c.Node != "" {
		return c.Target + " on " + c.Node
	}
	return c.Target
}

var planHeader = []string{"#", "kind", "target", "old → new", "why", "rule", "status", "note"}

// rolledBack says what a reader needs to know about a variant's rollback.
func rolledBack(v labdata.VariantInfo) string {
	switch {
	case len(v.Plan) == 0:
		return ""
	case v.RolledBack:
		return "rolled back after its runs"
	}
	return "NOT recorded as rolled back"
}

// serverSeen lists the distinct server and client descriptions the runs
// recorded, for provenance.
func serverSeen(r *Report) (servers, clients []string) {
	for _, s := range r.Runs {
		if s.summary == nil {
			continue
		}
		servers = appendNew(servers, serverLine(s))
		clients = appendNew(clients, clientLine(s))
	}
	return servers, clients
}

func serverLine(s *Sample) string {
	sv := s.summary.Server
	parts := []string{}
	if sv.Version != "" {
		parts = append(parts, "Redis "+sv.Version)
	}
	for _, p := range []string{sv.Mode, allocator(sv.Allocator), ioThreads(sv.IOThreads), sv.Executable} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ", ")
}

func allocator(a string) string {
	if a == "" {
		return ""
	}
	return "allocator " + a
}

func ioThreads(n string) string {
	if n == "" {
		return ""
	}
	return "io-threads " + n
}

func clientLine(s *Sample) string {
	c := s.summary.Client
	line := "redline " + orDefault(c.Redline, "?") + " (" + orDefault(c.Go, "?") + ") on " + orDefault(c.Hostname, "?")
	if c.Kernel != "" {
		line += ", kernel " + c.Kernel
	}
	if c.CPUs > 0 {
		line += ", " + itoa(c.CPUs) + " CPUs"
	}
	return line
}

func appendNew(ss []string, s string) []string {
	if s == "" || slices.Contains(ss, s) {
		return ss
	}
	return append(ss, s)
}
