package host

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"redline/internal/testutil"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"redline/internal/testutil/hostgen"
)

// hostsDir holds the fixture trees (testdata/hosts at the module root).
var hostsDir = filepath.Join("..", "..", "testdata", "hosts")

// fixtureNames lists the fixture trees (every directory with a SOURCE).
func fixtureNames(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(hostsDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(hostsDir, e.Name(), "SOURCE")); err == nil {
			names = append(names, e.Name())
		}
	}
	if len(names) < 4 {
		t.Fatalf("found %d fixture trees in %s, want at least 4", len(names), hostsDir)
	}
	return names
}

// readFixture reads a fixture tree into a snapshot.
func readFixture(t testing.TB, name string, opts Options) (*Snapshot, *FS) {
	t.Helper()
	fs, err := NewFSWith(FSOptions{Root: filepath.Join(hostsDir, name), Record: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Read(fs, opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Source.Root = "testdata/hosts/" + name // reproducible wherever the checkout is
	return s, fs
}

// The modelled and captured trees are generated; the committed files must
// be what the generator writes today.
func TestGeneratedFixturesMatchModels(t *testing.T) {
	trees := map[string]*hostgen.Tree{}
	for name, model := range hostgen.Models {
		trees[name] = model().Build()
	}
	for name, capture := range hostgen.Captures {
		trees[name] = capture().Build()
	}
	for name, tree := range trees {
		diffs, err := tree.Diff(filepath.Join(hostsDir, name), "/SOURCE")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(diffs) > 0 {
			if len(diffs) > 10 {
				diffs = append(diffs[:10], "...")
			}
			t.Errorf("%s differs from its model (run: go run ./tools/genhosts %s):\n%v", name, name, diffs)
		}
	}
}

// Every fixture tree reads without errors, and its JSON and summary match
// the golden files (go test ./internal/host -update rewrites them).
func TestFixtureGolden(t *testing.T) {
	for _, name := range fixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			s, _ := readFixture(t, name, Options{})
			if len(s.Errors) > 0 {
				t.Errorf("errors reading the fixture: %+v", s.Errors)
			}
			js, err := json.MarshalIndent(s, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			var summary bytes.Buffer
			if err := WriteSummary(&summary, s); err != nil {
				t.Fatal(err)
			}
			testutil.Golden(t, filepath.Join("testdata", "golden", name+".json"), append(js, '\n'))
			testutil.Golden(t, filepath.Join("testdata", "golden", name+".txt"), summary.Bytes())
			// The JSON reads back into the same snapshot.
			var back Snapshot
			if err := json.Unmarshal(js, &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(s, &back, snapshotCmp); diff != "" {
				t.Errorf("JSON round trip (-read +decoded):\n%s", diff)
			}
		})
	}
}

// Every file a fixture snapshot reads is in the tree, and nothing is read
// twice.
func TestFixtureReadLog(t *testing.T) {
	for _, name := range fixtureNames(t) {
		_, fs := readFixture(t, name, Options{})
		count := map[string]int{}
		for _, a := range fs.Log() {
			if a.Kind == AccessFile && a.Err == nil {
				count[a.Path]++
			}
		}
		var twice []string
		for p, n := range count {
			if n > 1 {
				twice = append(twice, p)
			}
		}
		sort.Strings(twice)
		if len(twice) > 0 {
			t.Errorf("%s: read more than once: %v", name, twice)
		}
	}
}
