package doctor

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// treeState records every file's content, mode and mtime under root.
func treeState(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		v := info.Mode().String() + " " + info.ModTime().Format(time.RFC3339Nano)
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A whole doctor run (host.Read through every rule) over a host tree
// leaves the tree exactly as it was: no file written, created or touched.
func TestGatherLeavesTreeUntouched(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"proc/sys/net/core/somaxconn":                "128\n",
		"proc/sys/vm/overcommit_memory":              "0\n",
		"proc/sys/net/ipv4/ip_local_port_range":      "10000\t20000\n",
		"proc/meminfo":                               "MemTotal:       16384000 kB\nSwapTotal:             0 kB\n",
		"proc/stat":                                  "cpu  1 2 3 4\ncpu0 1 2 3 4\nbtime 1700000000\n",
		"proc/interrupts":                            "           CPU0\n  0:         10   IO-APIC   2-edge      timer\n",
		"sys/kernel/mm/transparent_hugepage/enabled": "[always] madvise never\n",
		"sys/devices/system/cpu/online":              "0\n",
		"sys/devices/system/node/online":             "0\n",
	}
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	before := treeState(t, root)
	withRules(t, rule("reads-all", Low, func(f *Facts) Result {
		f.Sysctl("net.core.somaxconn")
		f.AllowedCPUs()
		f.TargetNICs()
		return Pass("read")
	}))
	f, err := Gather(context.Background(), GatherOptions{Root: root, Sample: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, ok := f.Sysctl("net.core.somaxconn"); !ok || v != "128" {
		t.Errorf("somaxconn from the tree = %q, %v", v, ok)
	}
	if _, err := Run(context.Background(), f, Options{}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(before, treeState(t, root)); d != "" {
		t.Errorf("the tree changed (-before +after):\n%s", d)
	}
}
