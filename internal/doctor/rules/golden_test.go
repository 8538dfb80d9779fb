package rules

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"redline/internal/testutil"
	"testing"

	"redline/internal/doctor"
	"redline/internal/host"
)

const goldenDir = "../../../testdata/doctor"

// writeups is the healthy host with every problem the write-ups ran into.
var writeups = []string{
	"somaxconn", "port-range", "tw-buckets-lowered", "irqbalance-pinning", "nic-numa-locality",
	"thp-enabled", "overcommit-memory", "io-threads-oversized", "nic-queue-count", "tcp-rmem-default",
	"fin-timeout", "syncookies-off", "hugetlb-reserved", "tw-reuse",
}

func writeupFacts() *doctor.Facts {
	f := healthyFacts()
	for _, id := range writeups {
		fires[id](f)
	}
	return f
}

func renderAll(t *testing.T, rep *doctor.Report) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	var b bytes.Buffer
	if err := doctor.WriteText(&b, rep, doctor.RenderOptions{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	out["txt"] = append([]byte(nil), b.Bytes()...)
	b.Reset()
	if err := doctor.WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	out["json"] = append([]byte(nil), b.Bytes()...)
	b.Reset()
	if err := doctor.WriteMarkdown(&b, rep, doctor.RenderOptions{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	out["md"] = append([]byte(nil), b.Bytes()...)
	return out
}

func compareGolden(t *testing.T, name string, got map[string][]byte) {
	t.Helper()
	for ext, b := range got {
		testutil.Golden(t, filepath.Join(goldenDir, name+"."+ext), b)
	}
}

// The write-ups' host: every problem they hit, in all three formats.
func TestGoldenWriteups(t *testing.T) {
	rep, err := doctor.Run(context.Background(), writeupFacts(), doctor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range writeups {
		if !fired(rep, id) {
			t.Errorf("%s did not fire on the write-ups' host", id)
		}
	}
	compareGolden(t, "writeups", renderAll(t, rep))
}

func fired(rep *doctor.Report, id string) bool {
	for _, f := range rep.Fired(doctor.Info) {
		if f.ID == id {
			return true
		}
	}
	return false
}

// Every fixture tree in testdata/hosts gives its golden report (no server:
// the Redis rules say not checked).
func TestGoldenFixtureTrees(t *testing.T) {
	trees, _ := filepath.Glob("../../../testdata/hosts/*")
	for _, dir := range trees {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			fs, err := host.NewFS(dir)
			if err != nil {
				t.Fatal(err)
			}
			snap, err := host.Read(fs, host.Options{})
			if err != nil {
				t.Fatal(err)
			}
			// The report names its root; keep it independent of where the
			// checkout is.
			snap.Source.Root = "testdata/hosts/" + name
			f := &doctor.Facts{Host: snap, RedisNote: "--root reads a fixture tree, which has no server"}
			rep, err := doctor.Run(context.Background(), f, doctor.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if errored := findingsWith(rep, doctor.Errored); len(errored) > 0 {
				t.Errorf("%d rule(s) errored: %+v", len(errored), errored)
			}
			compareGolden(t, "host-"+name, renderAll(t, rep))
		})
	}
	t.Logf("%d fixture trees", len(trees))
}

// findingsWith returns rep's findings whose status is s.
func findingsWith(rep *doctor.Report, s doctor.Status) []doctor.Finding {
	var out []doctor.Finding
	for _, f := range rep.Findings {
		if f.Status == s {
			out = append(out, f)
		}
	}
	return out
}
