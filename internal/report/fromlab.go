package report

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"redline/internal/labdata"
	"redline/internal/secret"
	"redline/internal/stats"
)

// FromResult builds the report of one lab result: its variants are the
// labels and its baseline the reference. file names the result in the
// report's provenance ("" when it was not read from a file).
func FromResult(res *labdata.Result, file string) *Report {
	r := &Report{Schema: ReportSchema, Title: labTitle(res), Dimension: "variant", Lab: res, markComputed: true}
	r.Labels, r.Reference = variantLabels(res)
	for i := range res.Runs {
		r.Runs = append(r.Runs, labSample(res, &res.Runs[i], i+1, file, res.Runs[i].Variant))
	}
	splitMixedWorkloads(r.Runs)
	r.Notes = labNotes(res)
	r.assemble(stats.LabWords)
	r.useLabComparisons(res.Comparisons)
	r.noteShortGroups(res.Scenario.Repetitions)
	r.Notes = append(r.Notes, sequentialNotes(res)...)
	r.Notes = append(r.Notes, noiseNotes(res)...)
	r.Notes = append(r.Notes, seriesNotes(res)...)
	r.Notes = append(r.Notes, samplingNotes(res)...)
	r.Notes = append(r.Notes, buildNotes(res)...)
	r.Notes = append(r.Notes, toolNotes(res)...)
	if n := profileNote(res); n != "" {
		r.Notes = append(r.Notes, n)
	}
	if file != "" {
		r.resultDir = filepath.Dir(file)
	}
	r.Inputs = []InputInfo{labInput(res, file, "")}
	return r
}

func labTitle(res *labdata.Result) string {
	if res.Scenario.Name == "" {
		return "redline lab"
	}
	return "redline lab: " + res.Scenario.Name
}

// variantLabels orders the variants as the lab described them, then any
// only the scenario or the runs name, and finds the baseline.
func variantLabels(res *labdata.Result) (labels []string, ref string) {
	add := func(name string, baseline bool) {
		if name != "" && !slices.Contains(labels, name) {
			labels = append(labels, name)
		}
		if baseline && ref == "" {
			ref = name
		}
	}
	for _, v := range res.Variants {
		add(v.Name, v.Baseline)
	}
	for _, v := range res.Scenario.Variants {
		add(v.Name, v.Baseline)
	}
	for _, run := range res.Runs {
		add(run.Variant, false)
	}
	if ref == "" && len(labels) > 0 {
		ref = labels[0]
	}
	return labels, ref
}

func labSample(res *labdata.Result, run *labdata.Run, index int, file, label string) *Sample {
	s := &Sample{
		Index: index, Source: file, Label: label, Row: run.Workload,
		Seq: run.Seq, Variant: run.Variant, Workload: run.Workload, Rep: run.Rep,
		ServerCPUPerRequest: run.ServerCPUPerRequest,
		Noise:               run.Noise, Series: run.Series, Sweep: run.Sweep,
		command: workloadCommand(res, run),
		fromLab: true,
	}
	s = newSample(s, run.Summary)
	if run.Retried && s.Problem == "" {
		s.Problem = "noisy (" + run.Noise.Noisy + "), run again"
	}
	return s
}

// workloadCommand is the workload as the scenario wrote it, or else the
// command line the run recorded.
func workloadCommand(res *labdata.Result, run *labdata.Run) string {
	for _, w := range res.Scenario.Workloads {
		// A "-t set,get" workload's runs are "name/SET" and "name/GET"; a
		// swept one's "name[d=300]...", with the swept flag appended.
		line, ok := "", false
		switch {
		case run.Sweep != nil && w.Name == run.Sweep.Workload:
			line, ok = w.Bench+" "+labdata.SweepParams[run.Sweep.Param]+" "+run.Sweep.Value, true
		case w.Name == run.Workload || strings.HasPrefix(run.Workload, w.Name+"/"):
			line, ok = w.Bench, w.Bench != ""
		}
		if !ok {
			continue
		}
		line = secret.RedactLine(line) // files written before redaction may hold -a PW
		if strings.HasPrefix(line, "-") {
			return "redline bench " + line
		}
		return line
	}
	if run.Summary != nil {
		return shellJoin(run.Summary.CommandLine)
	}
	return ""
}

// useLabComparisons puts the lab's own comparisons in place of the ones
// assemble computed: the lab's are the record of the experiment (stats.Compare
// made them; a v1 file's were judged again when it was read).
func (r *Report) useLabComparisons(cs []labdata.Comparison) {
	for _, c := range cs {
		g := r.group(c.Workload, c.Variant)
		if g == nil || g.Reference {
			continue
		}
		v := &Versus{N: c.N, RefN: c.BaselineN, Ratio: c.Ratio, HigherIsBetter: c.HigherIsBetter, Change: stats.Change(c.Ratio, c.HigherIsBetter),
			CILow: c.CILow, CIHigh: c.CIHigh, HasCI: c.HasCI, Level: c.Level, Verdict: c.Verdict, Reason: c.Reason, ComputedBy: "lab"}
		switch c.Metric {
		case labdata.MetricRPS.Key:
			g.VsThroughput = v
		case labdata.MetricP99.Key:
			g.VsP99 = v
		case labdata.MetricSpread.Key:
			g.VsSpread = v
		}
	}
	r.noteComputed()
}

func (r *Report) group(workload, label string) *Group {
	for _, w := range r.Workloads {
		if w.Name == workload {
			return w.Group(label)
		}
	}
	return nil
}

// noteComputed says when some comparisons come from the report rather
// than from the lab.
func (r *Report) noteComputed() {
	n := 0
	for _, w := range r.Workloads {
		for _, g := range w.Groups {
			for _, v := range []*Versus{g.VsThroughput, g.VsP99} {
				if v != nil && v.ComputedBy == "report" {
					n++
				}
			}
		}
	}
	if n > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d comparison(s) marked † are not in the file (the lab did not record them); redline report computed them from the runs with the lab's method (exact Mann-Whitney interval of the ratio, 5%% false-positive rate over the report's comparisons).", n))
	}
}

// noteShortGroups flags groups with fewer runs than the scenario asked for.
func (r *Report) noteShortGroups(want int) {
	if want <= 0 {
		return
	}
	var short []string
	for _, w := range r.Workloads {
		for _, g := range w.Groups {
			if g.N < want {
				short = append(short, fmt.Sprintf("%s on %s %d", g.Label, w.Name, g.N))
			}
		}
	}
	if len(short) > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("Fewer usable runs than the %d repetitions asked for: %s.", want, strings.Join(short, ", ")))
	}
}

// sequentialNotes state the lab's design and why it stopped (v3).
func sequentialNotes(res *labdata.Result) []string {
	q := res.Sequential
	if q == nil {
		return nil
	}
	plan := fmt.Sprintf("%d rounds", q.MaxRuns)
	if q.MinRuns != q.MaxRuns {
		plan = fmt.Sprintf("%d to %d rounds, until every interval was narrower than %.1f%% or %s was spent", q.MinRuns, q.MaxRuns, 100*q.Precision, q.Budget)
	}
	n := fmt.Sprintf("The lab planned %s; it ran %d (%s). Its %d comparisons share a %.0f%% false-positive rate (looks at %s runs, each interval at %.2f%% confidence, a claim needs %d runs a side).",
		plan, q.Rounds, q.Stopped, q.Comparisons, 100*q.Alpha, q.LooksText(), 100*(1-q.Level), q.RunsNeeded)
	if q.Paired {
		n = fmt.Sprintf("The lab planned %s; it ran %d (%s). The variants ran in a random order within each round (seed %d), and throughput and p99 are compared round by round (exact Wilcoxon signed-rank interval of the paired ratios), which cancels what the machine did to a whole round. Its %d comparisons share a %.0f%% false-positive rate (looks at %s rounds, each interval at %.2f%% confidence, a claim needs %d rounds).",
			plan, q.Rounds, q.Stopped, q.Seed, q.Comparisons, 100*q.Alpha, q.LooksText(), 100*(1-q.Level), q.RunsNeeded)
	}
	if a := res.NothingClear(); a != "" {
		return []string{a, n}
	}
	return []string{n}
}

// labNotes are the caveats about the experiment as a whole.
func labNotes(res *labdata.Result) []string {
	var notes []string
	if !res.Complete {
		n := fmt.Sprintf("This lab run did not finish (the file is a partial record); the tables cover the %d runs it measured", len(res.Runs))
		if res.Planned != nil && res.Planned.Total > 0 {
			n += fmt.Sprintf(" of the %d planned", res.Planned.Total)
		}
		notes = append(notes, n+".")
	}
	if res.Error != "" {
		notes = append(notes, "The lab stopped with an error: "+res.Error+".")
	}
	if len(res.Runs) == 0 {
		notes = append(notes, "No run was measured.")
	}
	for _, v := range res.Variants {
		notes = append(notes, variantNotes(v)...)
	}
	return notes
}

// variantNotes flags changes that did not happen as planned and a variant
// the host was not recorded as restored from.
func variantNotes(v labdata.VariantInfo) []string {
	count := map[string]int{}
	for _, st := range v.Plan {
		count[st.Status]++
	}
	var notes []string
	if k := count["refused"] + count["skipped"]; k > 0 {
		notes = append(notes, fmt.Sprintf("Variant %s: %d of its %d planned changes were not applied (refused or skipped); its runs measure the others.", v.Name, k, len(v.Plan)))
	}
	if k := count["drifted"]; k > 0 {
		notes = append(notes, fmt.Sprintf("Variant %s: %d change(s) drifted (something else changed the value after redline set it).", v.Name, k))
	}
	if count["applied"]+count["drifted"]+count["restored"] > 0 && !v.RolledBack {
		notes = append(notes, fmt.Sprintf("Variant %s: its changes are not recorded as rolled back; check the host with `redline tune status` and restore with `redline tune rollback`.", v.Name))
	}
	return notes
}

func labInput(res *labdata.Result, file, label string) InputInfo {
	in := InputInfo{
		File: file, Label: label, Kind: "lab", Schema: res.Schema, Redline: res.Redline,
		CommandLine: secret.Redact(res.CommandLine), Started: res.Started, Finished: res.Finished,
		Complete: res.Complete, Error: res.Error, Hostname: res.ServerFacts().Hostname,
		Kernel: res.ServerFacts().Kernel, CPUs: res.ServerFacts().CPUs, ServerVersion: res.Target.ServerVersion,
		Runs: len(res.Runs),
	}
	in.Target = strings.TrimSpace(res.Target.Kind + " " + res.Target.Address)
	return in
}

// splitMixedWorkloads gives each test its own row when one workload's runs
// measured several (a -t set,get workload): pooling SET with GET would
// compare nothing.
func splitMixedWorkloads(ss []*Sample) {
	titles := map[string]map[string]bool{}
	for _, s := range ss {
		if s.summary == nil {
			continue
		}
		if titles[s.Workload] == nil {
			titles[s.Workload] = map[string]bool{}
		}
		titles[s.Workload][s.summary.Title] = true
	}
	for _, s := range ss {
		if s.summary != nil && len(titles[s.Workload]) > 1 {
			s.Row = s.Workload + rowSep + s.summary.Title
		}
	}
}

// buildNotes name what each variant ran: the provenance of a binary
// redline build made (compiler and version, make variables, source and its
// hash, allocator, PGO training), or the binary as given.
func buildNotes(res *labdata.Result) []string {
	var notes []string
	for _, v := range res.Variants {
		if v.Build == nil {
			continue
		}
		notes = append(notes, fmt.Sprintf("Variant %s ran a redis-server built by redline build: %s.", v.Name, strings.Join(v.Build.Lines(), "; ")))
	}
	if len(notes) > 0 && len(notes) < len(res.Variants) {
		bin := res.Target.Binary
		if bin == "" {
			bin = "redis-server"
		}
		notes = append(notes, fmt.Sprintf("The other variants ran %s as given (not built by redline).", bin))
	}
	return notes
}

// toolNotes say which program measured the runs when it was not redline's
// bench (client.tool), how precisely, and what each variant preloaded
// into it.
func toolNotes(res *labdata.Result) []string {
	var notes []string
	seen := map[string]bool{}
	for _, run := range res.Runs {
		t := run.Tool
		if t == nil {
			continue
		}
		if !seen[t.Name] {
			seen[t.Name] = true
			notes = append(notes, fmt.Sprintf("Measured by %s, not redline bench (%s).", t.Name, t.Precision))
		}
		if key := run.Variant + "\x00" + strings.Join(t.Preloaded, ":"); len(t.Preloaded) > 0 && !seen[key] {
			seen[key] = true
			notes = append(notes, fmt.Sprintf("Variant %s: %s preloaded into %s (seen in its /proc/PID/maps).", run.Variant, strings.Join(t.Preloaded, ", "), t.Name))
		}
	}
	return notes
}
