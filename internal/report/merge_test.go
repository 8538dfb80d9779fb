package report

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"redline/internal/labdata"
)

func kernelSources(t *testing.T) []*Source {
	var srcs []*Source
	for _, k := range []string{"3.10", "4.19", "5.4", "6.9"} {
		srcs = append(srcs, mustLoad(t, "kernel-"+k+".json"))
	}
	return srcs
}

func TestKeyFromName(t *testing.T) {
	for _, c := range []struct{ path, key, want string }{
		{"kernel-5.4.json", "kernel", "5.4"},
		{"results/kernel-3.10.json", "kernel", "3.10"},
		{"kernel=6.9-rc7.json", "kernel", "6.9-rc7"},
		{"host-a_kernel-4.19_run2.json", "kernel", "4.19"},
		{"runs/kernel-5.4/result.json", "kernel", "5.4"},
		{"io-threads-4.json", "io-threads", "4"},
		{"mykernel-5.4.json", "kernel", ""}, // not a word of its own
		{"result.json", "kernel", ""},
	} {
		got, ok := keyFromName(c.path, c.key)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("keyFromName(%q, %q) = %q, %v; want %q", c.path, c.key, got, ok, c.want)
		}
	}
}

func TestMergeExplicitLabels(t *testing.T) {
	srcs := kernelSources(t)
	for i, l := range []string{"old", "mid", "new", "newest"} {
		srcs[i].Label = l
	}
	r := mustMerge(t, srcs, MergeOptions{By: "kernel"})
	if want := []string{"old", "mid", "new", "newest"}; !slices.Equal(r.Labels, want) {
		t.Errorf("labels %v, want %v (explicit labels win over the file names)", r.Labels, want)
	}
	if r.Dimension != "kernel" || r.Reference != "old" {
		t.Errorf("dimension %q reference %q", r.Dimension, r.Reference)
	}
	if got := rowNames(r); !slices.Equal(got, []string{"SET", "GET"}) {
		t.Errorf("rows %v, want SET and GET", got)
	}
	g := r.Workloads[0].Group("newest")
	if g.N != 3 || g.VsThroughput == nil || g.VsThroughput.ComputedBy != "report" {
		t.Errorf("group newest: %+v", g)
	}
}

func rowNames(r *Report) []string {
	var names []string
	for _, w := range r.Workloads {
		names = append(names, w.Name)
	}
	return names
}

func TestMergeByField(t *testing.T) {
	r := mustMerge(t, kernelSources(t), MergeOptions{By: "host.kernel"})
	if r.Labels[0] != "3.10.0-1160.el7.x86_64" || len(r.Labels) != 4 {
		t.Errorf("labels %v: bench documents should give the client's kernel", r.Labels)
	}
}

func TestMergeReference(t *testing.T) {
	r := mustMerge(t, kernelSources(t), MergeOptions{By: "kernel", Reference: "5.4"})
	if r.Labels[0] != "5.4" || r.Reference != "5.4" {
		t.Errorf("labels %v reference %q, want 5.4 first", r.Labels, r.Reference)
	}
	if g := r.Workloads[0].Group("5.4"); !g.Reference || g.VsThroughput != nil {
		t.Errorf("reference group %+v", g)
	}
}

// TestMergePools: files with the same label are one group.
func TestMergePools(t *testing.T) {
	srcs := kernelSources(t)[:2]
	srcs[0].Label, srcs[1].Label = "same", "same"
	r := mustMerge(t, srcs, MergeOptions{})
	g := r.Workloads[0].Groups[0]
	if len(r.Labels) != 1 || g.N != 6 || g.Files != 2 || g.Latency == nil || g.HistogramRuns != 6 {
		t.Fatalf("labels %v, group N=%d files=%d histograms=%d", r.Labels, g.N, g.Files, g.HistogramRuns)
	}
	if !anyContains(r.Notes, "pools runs from 2 files") {
		t.Errorf("notes %q do not say runs were pooled", r.Notes)
	}
}

// TestMergeRowsKeepSettingsApart: one document holding SET at several
// value sizes gives one row per size unless the size is the label.
func TestMergeRowsKeepSettingsApart(t *testing.T) {
	r := mustMerge(t, []*Source{mustLoad(t, "net-10g.json")}, MergeOptions{})
	want := []string{"SET -d 3", "GET -d 3", "SET -d 300", "GET -d 300", "SET -d 3000", "GET -d 3000", "SET -d 10000", "GET -d 10000"}
	if got := rowNames(r); !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	r = mustMerge(t, []*Source{mustLoad(t, "net-10g.json")}, MergeOptions{By: "bench.payload_bytes"})
	if got := rowNames(r); !slices.Equal(got, []string{"SET", "GET"}) {
		t.Errorf("by payload: rows %v, want SET and GET", got)
	}
}

func TestMergeLabAndBench(t *testing.T) {
	a, b := mustLoad(t, "lab.json"), mustLoad(t, "kernel-3.10.json")
	r := mustMerge(t, []*Source{a, b}, MergeOptions{})
	rows := rowNames(r)
	for _, want := range []string{"baseline · set", "tuned · get", "(bench) · SET"} {
		if !slices.Contains(rows, want) {
			t.Errorf("rows %v lack %q", rows, want)
		}
	}
	if !slices.Equal(r.Labels, []string{"lab", "kernel-3.10"}) {
		t.Errorf("labels %v, want the file names", r.Labels)
	}
	if md := string(render(t, r, Markdown)); !strings.Contains(md, "- findings and plans: `redline report testdata/input/lab.json`") {
		t.Error("a merge does not say where the lab result's findings and plans are")
	}
}

func TestMergeSingleLabByVariant(t *testing.T) {
	r := mustMerge(t, []*Source{mustLoad(t, "lab.json")}, MergeOptions{By: "variant", Reference: "tuned"})
	if r.Reference != "tuned" || !slices.Equal(rowNames(r), []string{"set", "get"}) {
		t.Errorf("reference %q rows %v", r.Reference, rowNames(r))
	}
	if v := r.Workloads[0].Group("baseline").VsThroughput; v == nil || v.Ratio >= 1 {
		t.Errorf("baseline against tuned: %+v, want a ratio below 1", v)
	}
}

func TestMergeErrors(t *testing.T) {
	cases := []struct {
		name string
		srcs func() []*Source
		o    MergeOptions
		want string
	}{
		{"no files", func() []*Source { return nil }, MergeOptions{}, "no input files"},
		{"unknown field", func() []*Source { return kernelSources(t) }, MergeOptions{By: "host.colour"}, "--by host.colour: no such field"},
		{"field not recorded", func() []*Source { return kernelSources(t) }, MergeOptions{By: "config.io-threads"}, "does not record config.io-threads"},
		{"lab-only field on bench", func() []*Source { return kernelSources(t) }, MergeOptions{By: "host.cpu_model"}, "kernel-3.10.json: --by host.cpu_model"},
		{"name not in file name", func() []*Source { return kernelSources(t) }, MergeOptions{By: "allocator"}, "no label for this file: give it as"},
		{"unknown reference", func() []*Source { return kernelSources(t) }, MergeOptions{By: "kernel", Reference: "2.6"}, "--baseline 2.6: no such label; the labels are 3.10, 4.19, 5.4, 6.9"},
		{"lab without runs", func() []*Source { return []*Source{{Path: "x.json", Result: &labdata.Result{}}} }, MergeOptions{}, "no runs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Merge(c.srcs(), c.o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ name, body, want string }{
		{"not JSON", "hello", "not a redline results file (invalid JSON at line 1"},
		{"no schema", `{"results": []}`, `not a redline results file (no "schema" field)`},
		{"other schema", `{"schema": "prometheus/v1"}`, `not a redline results file (schema "prometheus/v1")`},
		{"newer lab", `{"schema": "redline.lab/v9"}`, `schema "redline.lab/v9" is a version this redline does not read`},
		{"bench summary", `{"schema": "redline.bench.summary/v1"}`, "is a single bench summary"},
		{"truncated lab", "{\"schema\": \"redline.lab/v1\",\n\"runs\": [", "truncated or damaged redline.lab/v1 file (invalid JSON at line 2"},
		{"wrong type", "{\"schema\": \"redline.lab/v1\",\n\"complete\": \"yes\"}", `field "complete" at line 2 holds a JSON string, want bool`},
		{"empty bench", `{"schema": "redline.bench/v1", "results": []}`, "holds no results"},
		{"null summary", `{"schema": "redline.bench/v1", "results": [null]}`, "results[0] is null"},
		{"bad histogram", `{"schema": "redline.bench/v1", "results": [{"histogram": "!!"}]}`, "histogram is not base64"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".json")
			if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			var ie *InputError
			if !errors.As(err, &ie) || ie.Path != path {
				t.Fatalf("error %v is not an InputError naming %s", err, path)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want it to contain %q", err, c.want)
			}
		})
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json: cannot read") {
		t.Errorf("missing file: %v", err)
	}
}

func anyContains(ss []string, sub string) bool {
	return slices.ContainsFunc(ss, func(s string) bool { return strings.Contains(s, sub) })
}
