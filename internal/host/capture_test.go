package host

import (
	"os"
	"path/filepath"
	"redline/internal/redistest"
	"runtime"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// snapshotCmp compares snapshots (CPUSet has unexported storage).
var snapshotCmp = cmp.Options{
	cmp.Comparer(func(a, b CPUSet) bool { return a.Equal(b) }),
	cmpopts.EquateEmpty(),
}

// A capture of the live machine, read back, gives the same snapshot: the
// capture holds exactly what was read.
func TestCaptureRoundTripLive(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs Linux /proc and /sys")
	}
	// Only a server of this test's own: other packages' tests start and
	// stop redis-servers while this one runs, and a process that exits
	// between Read and Capture would make the two differ.
	srv := redistest.Start(t)
	opts := Options{PIDs: []int{srv.Pid()}}
	// Their network namespaces' veths come and go too: an interface that
	// went between the read and the capture is not this code's mistake,
	// so an attempt counts only when this host's interfaces were the same
	// before and after it.
	var tree *FS
	for attempt := 1; ; attempt++ {
		nics := netInterfaces()
		var diff string
		tree, diff = captureRoundTrip(t, opts)
		if slices.Equal(nics, netInterfaces()) || attempt == 5 {
			if diff != "" {
				t.Errorf("snapshot of the capture differs from the live one (-live +capture):\n%s", diff)
			}
			break
		}
		t.Logf("attempt %d: this host's network interfaces changed during it; again", attempt)
	}
	// The tree reads nothing the capture did not write.
	for _, a := range tree.Log() {
		if a.Kind == AccessFile && a.Err == nil {
			if _, err := os.Lstat(tree.Path(a.Path)); err != nil {
				t.Errorf("read %s, which is not in the capture", a.Path)
			}
		}
	}
}

// captureRoundTrip reads the live machine (opts), captures what it read,
// reads the capture back and returns the capture's FS and how the two
// snapshots differ ("" when they do not).
func captureRoundTrip(t *testing.T, opts Options) (tree *FS, diff string) {
	t.Helper()
	fs, err := NewFSWith(FSOptions{Root: "/", Record: true})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := Read(fs, opts)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "tree")
	st, err := Capture(fs, dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Files < 50 || st.Links == 0 {
		t.Errorf("capture wrote %d files and %d links; expected a real tree", st.Files, st.Links)
	}
	tree, err = NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Read(tree, opts)
	if err != nil {
		t.Fatal(err)
	}
	snap.Source, again.Source = Source{}, Source{}
	return tree, cmp.Diff(snap, again, snapshotCmp)
}

// netInterfaces lists this host's network interfaces.
func netInterfaces() []string {
	entries, _ := os.ReadDir("/sys/class/net")
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestCaptureRefusesNonEmptyDir(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"proc", "sys"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := NewFSWith(FSOptions{Root: root, Record: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Capture(fs, dir); err == nil {
		t.Error("Capture wrote into a non-empty directory")
	}
}

// No file is read twice in one snapshot (the benchmark's second promise),
// whatever runs on this host (other tests' servers and namespaces come and
// go); TestLiveNetnsTwoServersOneNamespace holds it for two servers
// sharing a namespace, whose sysctls are read once.
func TestReadsNoFileTwice(t *testing.T) {
	fs, err := NewFSWith(FSOptions{Root: "/", Record: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Read(fs, Options{}); err != nil {
		t.Fatal(err)
	}
	if seen := checkReadOnce(t, fs); seen["/proc/interrupts"] != 1 {
		t.Error("the snapshot did not read /proc/interrupts")
	}
}

// checkReadOnce fails t for each file the recording fs read more than
// once, and returns how often each was read.
func checkReadOnce(t *testing.T, fs *FS) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for _, a := range fs.Log() {
		if a.Kind == AccessFile || a.Kind == AccessVirtual {
			seen[a.Path]++
		}
	}
	for p, n := range seen {
		if n > 1 {
			t.Errorf("%s read %d times", p, n)
		}
	}
	return seen
}
