package steer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/testutil"
)

// Another redline's temporary tracefs (a lab's steer, an older redline's
// left by kill -9) is not used: its owner unmounts it under the borrower.
func TestMountedTracefsSkipsTemporaryMounts(t *testing.T) {
	cases := map[string]string{
		"44 26 0:13 / /tmp/redline-tracefs-2633383106 rw,relatime - tracefs nodev rw\n":                                         "",
		"44 26 0:13 / /tmp/redline-tracefs-1 rw - tracefs nodev rw\n36 25 0:12 / /sys/kernel/tracing rw - tracefs tracefs rw\n": "/sys/kernel/tracing",
		"36 25 0:12 / /sys/kernel/tracing rw - tracefs tracefs rw\n":                                                            "/sys/kernel/tracing",
		"36 25 0:12 / /mnt/trace rw - tracefs tracefs rw\n":                                                                     "/mnt/trace",
	}
	for info, want := range cases {
		p := filepath.Join(t.TempDir(), "mountinfo")
		if err := os.WriteFile(p, []byte(info), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := mountedTracefs(p); got != want {
			t.Errorf("%q: got %q, want %q", info, got, want)
		}
	}
}

// A private tracefs is seen by no one else: not in the mount table, its
// temporary directory gone; the sampler opens the tracepoints through it
// until Close.
func TestPrivateTracefsLeavesNoMount(t *testing.T) {
	testutil.NeedRoot(t)
	before := tracefsMounts(t)
	tfs, err := mountPrivate()
	if err != nil {
		t.Skipf("tracefs: %v", err)
	}
	defer tfs.Close()
	smp, err := NewSampler(tfs, SamplerOptions{})
	if err != nil {
		t.Fatalf("sampler through %s: %v", tfs.Dir, err)
	}
	smp.Close()
	if after := tracefsMounts(t); after != before {
		t.Errorf("mount table's tracefs lines:\nbefore %q\nafter  %q", before, after)
	}
	dir := tfs.root.Name()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there (%v)", dir, err)
	}
	if err := tfs.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFormat(tfs.Dir, groGroup, groName); err == nil {
		t.Errorf("%s still readable after Close", tfs.Dir)
	}
}

func tracefsMounts(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, " - tracefs ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
