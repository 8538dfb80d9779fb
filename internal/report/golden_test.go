package report

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"redline/internal/testutil"
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
				path := filepath.Join("testdata", "golden", c.name+"."+string(f))
				got := render(t, r, f)
				if f == JSON {
					got = ulpEqual(path, got)
				}
				testutil.Golden(t, path, got)
			})
		}
	}
}

// ulpEqual returns the golden file's bytes when got differs from them only
// in the last bits of its numbers, else got. math.Exp and friends are
// assembly on amd64 and arm64 and may round apart in the last place: the
// arm64 tests (make test-arm64) compare the same golden files.
func ulpEqual(path string, got []byte) []byte {
	want, err := os.ReadFile(path)
	if err != nil || bytes.Equal(want, got) {
		return got
	}
	var a, b any
	if json.Unmarshal(want, &a) != nil || json.Unmarshal(got, &b) != nil {
		return got
	}
	if closeJSON(a, b) {
		return want
	}
	return got
}

func closeJSON(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && math.Abs(x-y) <= 1e-12*math.Max(math.Abs(x), math.Abs(y))
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !closeJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k := range x {
			if !closeJSON(x[k], y[k]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
