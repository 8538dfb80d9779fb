package report

import (
	"bytes"
	"path/filepath"
	"redline/internal/testutil"
	"testing"
)

func render(t *testing.T, r *Report, f Format) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, r, f); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// goldenCases are the reports every format is checked on.
var goldenCases = []struct {
	name  string
	build func(t *testing.T) *Report
}{
	{"lab", func(t *testing.T) *Report { return FromResult(mustLoad(t, "lab.json").Result, "lab.json") }},
	{"partial", func(t *testing.T) *Report {
		return FromResult(mustLoad(t, "lab-partial.json").Result, "lab-partial.json")
	}},
	{"kernels", func(t *testing.T) *Report {
		var srcs []*Source
		for _, k := range []string{"3.10", "4.19", "5.4", "6.9"} {
			srcs = append(srcs, mustLoad(t, "kernel-"+k+".json"))
		}
		return mustMerge(t, srcs, MergeOptions{By: "kernel"})
	}},
	{"valuesizes", func(t *testing.T) *Report {
		a, b := mustLoad(t, "net-10g.json"), mustLoad(t, "net-rdma.json")
		a.Label, b.Label = "10GbE", "RDMA"
		return mustMerge(t, []*Source{a, b}, MergeOptions{By: "bench.payload_bytes"})
	}},
}

func mustMerge(t *testing.T, srcs []*Source, o MergeOptions) *Report {
	t.Helper()
	r, err := Merge(srcs, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestGolden(t *testing.T) {
	for _, c := range goldenCases {
		r := c.build(t)
		for _, f := range Formats {
			t.Run(c.name+"."+string(f), func(t *testing.T) {
				testutil.Golden(t, filepath.Join("testdata", "golden", c.name+"."+string(f)), render(t, r, f))
			})
		}
	}
}
