package report

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"redline/internal/benchdata"
	"redline/internal/secret"
	"redline/internal/stats"
)

// MergeOptions says how Merge labels and compares runs from several files.
type MergeOptions struct {
	// By is what the labels are. A field key (see Fields: host.kernel,
	// bench.payload_bytes, config.io-threads, variant, file...) reads the
	// label from each run. Any other word names the labels given as
	// FILE=LABEL, or found in the file name as WORD-VALUE
	// (kernel-5.4.json). Empty means each file's label, else its name.
	By string
	// Reference is the label the others are compared with; empty means
	// the first label met.
	Reference string
}

// DefaultBy is the dimension of a merge without --by: each file's explicit
// label, or else its name.
const DefaultBy = "label"

// rowSep joins the parts of a row name.
const rowSep = " · "

// Merge puts the runs of several files into one comparison: the labels
// are the columns, and runs that share a label and a row (workload, plus
// variant, source label and bench settings when those differ) are pooled
// as repetitions.
func Merge(srcs []*Source, o MergeOptions) (*Report, error) {
	if len(srcs) == 0 {
		return nil, errors.New("no input files: give one or more results files")
	}
	by := orDefault(o.By, DefaultBy)
	f, isField := lookupField(by)
	if !isField && strings.Contains(by, ".") {
		return nil, fmt.Errorf("--by %s: no such field; fields are %s (or give each file a label as FILE=LABEL)", by, fieldNames())
	}
	items := collect(srcs)
	if err := labelItems(items, by, f, isField); err != nil {
		return nil, err
	}
	nameRows(items, by, isField)
	r := &Report{Schema: ReportSchema, Dimension: by, Title: "redline report: by " + by}
	for i, it := range items {
		it.s.Index = i + 1
		r.Runs = append(r.Runs, it.s)
	}
	if err := r.orderLabels(o.Reference); err != nil {
		return nil, err
	}
	numberReps(r.Runs)
	r.Notes = mergeNotes(srcs)
	r.assemble(stats.MergeWords)
	r.Inputs = inputsOf(srcs)
	r.notePooled()
	return r, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// collect turns every run of every file into an item.
func collect(srcs []*Source) []*item {
	var items []*item
	for _, src := range srcs {
		if res := src.Result; res != nil {
			for i := range res.Runs {
				run := &res.Runs[i]
				items = append(items, &item{src: src, run: run, sum: run.Summary, s: labSample(res, run, 0, src.Path, "")})
			}
			continue
		}
		for i, sum := range src.Bench.Results {
			s := &Sample{Source: src.Path, Seq: i + 1, Workload: sum.Title, command: benchCommand(src.Bench, sum)}
			items = append(items, &item{src: src, sum: sum, s: newSample(s, sum)})
		}
	}
	return items
}

func benchCommand(doc *benchdata.Document, sum *benchdata.Summary) string {
	if len(sum.CommandLine) > 0 {
		return shellJoin(sum.CommandLine)
	}
	return shellJoin(doc.CommandLine)
}

// labelItems sets every run's label from the field, or from its file's
// explicit label or name.
func labelItems(items []*item, by string, f field, isField bool) error {
	for _, it := range items {
		l, err := labelOf(it, by, f, isField)
		if err != nil {
			return err
		}
		it.s.Label = l
	}
	return nil
}

func labelOf(it *item, by string, f field, isField bool) (string, error) {
	if isField {
		if v := f.read(it); v != "" {
			return v, nil
		}
		return "", fmt.Errorf("%s: --by %s: run %d (%s) does not record %s; label the file as %s=LABEL with another --by name, or choose another field",
			it.src.Path, by, it.s.Seq, it.s.Workload, by, it.src.Path)
	}
	if it.src.Label != "" {
		return it.src.Label, nil
	}
	if by == DefaultBy {
		return fileStem(it.src.Path), nil
	}
	if v, ok := keyFromName(it.src.Path, by); ok {
		return v, nil
	}
	return "", fmt.Errorf("%s: --by %s: no label for this file: give it as %s=LABEL, name the file like %s-VALUE.json, or use a field (%s)",
		it.src.Path, by, it.src.Path, by, fieldNames())
}

// nameRows names each run's row from what tells runs apart besides the
// label: the file's explicit label (when the label is a field), the
// variant (when there are several) and the workload with the bench
// settings that differ between its runs.
func nameRows(items []*item, by string, isField bool) {
	variants := map[string]bool{}
	for _, it := range items {
		variants[it.s.Variant] = true
	}
	settings := differingSettings(items, benchFlagOf[by])
	for _, it := range items {
		var parts []string
		if isField && it.src.Label != "" {
			parts = append(parts, it.src.Label)
		}
		if by != "variant" && len(variants) > 1 {
			parts = append(parts, orDefault(it.s.Variant, "(bench)"))
		}
		if by != "workload" {
			parts = append(parts, strings.TrimSpace(it.s.Workload+" "+settings(it)))
		}
		it.s.Row = orDefault(strings.Join(parts, rowSep), "all runs")
	}
}

// settingsOf are the bench settings that can tell two runs of one
// workload apart, as redis-benchmark flags.
func settingsOf(s *benchdata.Summary) [][2]string {
	if s == nil {
		return nil
	}
	c := s.Config
	size := itoa(c.PayloadBytes)
	if c.ValueSizes != "" {
		size = c.ValueSizes
	}
	rate := fmt.Sprint(c.Rate)
	if s.Capacity != nil {
		rate = "searched" // a capacity search's: its step's, not a setting
	}
	return [][2]string{
		{"-c", itoa(c.Clients)}, {"-P", itoa(c.Pipeline)}, {"-d", size},
		{"-r", fmt.Sprint(c.KeySpace)}, {"--threads", itoa(c.Threads)},
		{"--rate", rate}, {"--key-dist", c.KeyDist},
	}
}

// differingSettings returns, for a run, the flags whose values differ
// among the runs of its workload (except the one being compared).
func differingSettings(items []*item, skip string) func(*item) string {
	seen := map[string]map[string]map[string]bool{} // workload -> flag -> values
	for _, it := range items {
		w := seen[it.s.Workload]
		if w == nil {
			w = map[string]map[string]bool{}
			seen[it.s.Workload] = w
		}
		for _, kv := range settingsOf(it.sum) {
			if w[kv[0]] == nil {
				w[kv[0]] = map[string]bool{}
			}
			w[kv[0]][kv[1]] = true
		}
	}
	return func(it *item) string {
		var out []string
		for _, kv := range settingsOf(it.sum) {
			if kv[0] != skip && len(seen[it.s.Workload][kv[0]]) > 1 {
				out = append(out, kv[0]+" "+kv[1])
			}
		}
		return strings.Join(out, " ")
	}
}

// orderLabels lists the labels in order of appearance, the reference first.
func (r *Report) orderLabels(ref string) error {
	for _, s := range r.Runs {
		if !slices.Contains(r.Labels, s.Label) {
			r.Labels = append(r.Labels, s.Label)
		}
	}
	if len(r.Labels) == 0 {
		return errors.New("the files hold no runs to compare")
	}
	if ref == "" {
		r.Reference = r.Labels[0]
		return nil
	}
	i := slices.Index(r.Labels, ref)
	if i < 0 {
		return fmt.Errorf("--baseline %s: no such label; the labels are %s", ref, strings.Join(r.Labels, ", "))
	}
	r.Labels = append([]string{ref}, slices.Delete(r.Labels, i, i+1)...)
	r.Reference = ref
	return nil
}

// numberReps numbers bench runs 1, 2, ... within their file, row and label
// (lab runs keep their own repetition numbers).
func numberReps(ss []*Sample) {
	count := map[[3]string]int{}
	for _, s := range ss {
		if s.fromLab {
			continue
		}
		k := [3]string{s.Source, s.Row, s.Label}
		count[k]++
		s.Rep = count[k]
	}
}

func mergeNotes(srcs []*Source) []string {
	var notes []string
	for _, src := range srcs {
		if res := src.Result; res != nil && !res.Complete {
			notes = append(notes, fmt.Sprintf("%s: the lab run did not finish; only its %d measured runs are included.", src.Path, len(res.Runs)))
		}
	}
	return notes
}

// notePooled says when runs from different files share a cell.
func (r *Report) notePooled() {
	for _, w := range r.Workloads {
		for _, g := range w.Groups {
			if g.Files > 1 {
				r.Notes = append(r.Notes, fmt.Sprintf("%s under %s pools runs from %d files as repetitions of one group.", w.Name, g.Label, g.Files))
			}
		}
	}
}

func inputsOf(srcs []*Source) []InputInfo {
	var in []InputInfo
	for _, src := range srcs {
		if src.Result != nil {
			in = append(in, labInput(src.Result, src.Path, src.Label))
			continue
		}
		in = append(in, benchInput(src))
	}
	return in
}

func benchInput(src *Source) InputInfo {
	doc := src.Bench
	in := InputInfo{File: src.Path, Label: src.Label, Kind: "bench", Schema: doc.Schema, Redline: doc.Redline,
		CommandLine: secret.Redact(doc.CommandLine), Started: doc.Started, Complete: true, Runs: len(doc.Results)}
	for _, s := range doc.Results {
		if s.Interrupted || s.Error != "" {
			in.Complete = false
		}
		in.Finished = s.End
	}
	first := doc.Results[0]
	in.Hostname, in.Kernel, in.CPUs = first.Client.Hostname, first.Client.Kernel, first.Client.CPUs
	in.ServerVersion, in.Target = first.Server.Version, first.Config.Target
	return in
}
