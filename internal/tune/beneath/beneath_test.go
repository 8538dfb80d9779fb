package beneath

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Issue 10 item 5: a name is resolved below its tree. A magic link
// (/proc/self/root) or a symlink out of the tree is refused; links that
// stay inside (sysfs's class/net/IF -> ../../devices/...) are followed.
func TestOpenStaysBeneath(t *testing.T) {
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	mk := func(rel, content string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("sys/devices/virtual/net/eth0/queues/rx-0/rps_cpus", "00\n")
	os.MkdirAll(filepath.Join(root, "sys/class/net"), 0o755)
	os.Symlink("../../devices/virtual/net/eth0", filepath.Join(root, "sys/class/net/eth0"))
	os.MkdirAll(filepath.Join(root, "proc/irq"), 0o755)
	os.Symlink(outside, filepath.Join(root, "proc/irq/24"))
	os.Symlink("../../../"+filepath.Base(outside), filepath.Join(root, "proc/irq/25"))

	if b, err := ReadFile(root, "/sys/class/net/eth0/queues/rx-0/rps_cpus"); err != nil || string(b) != "00\n" {
		t.Errorf("in-tree link: %q %v", b, err)
	}
	for _, name := range []string{"/proc/irq/24/victim", "/proc/irq/25/victim"} {
		f, err := Open(root, name, os.O_WRONLY|os.O_TRUNC, 0)
		if err == nil {
			f.Close()
			t.Errorf("%s: opened for writing through a link out of the tree", name)
		} else if !errors.Is(err, ErrEscapes) {
			t.Errorf("%s: %v, want ErrEscapes", name, err)
		}
	}
	// The live host's magic links: /proc/self/root is the whole filesystem.
	if _, err := Open("/", "/proc/self/root"+victim, os.O_RDONLY, 0); !errors.Is(err, ErrEscapes) {
		t.Errorf("/proc/self/root%s: %v, want ErrEscapes", victim, err)
	}
	if _, err := Resolve("/", "/proc/self/cwd"); !errors.Is(err, ErrEscapes) {
		t.Errorf("/proc/self/cwd: %v, want ErrEscapes", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Errorf("the file outside the tree now holds %q", b)
	}
	if _, err := ReadFile("/", "/proc/self/stat"); err != nil {
		t.Errorf("/proc/self/stat (a plain link inside /proc): %v", err)
	}
}

// A link that stays inside the tree but lands on another file than the
// name describes is refused for writing: the allow-list holds for the
// resolved path too.
func TestWriteKeepsTail(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "sys/kernel/mm/transparent_hugepage"), 0o755)
	os.WriteFile(filepath.Join(root, "sys/kernel/mm/transparent_hugepage/enabled"), []byte("x\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "sys/class/net/eth0/queues/rx-0"), 0o755)
	os.Symlink("../../../../../kernel/mm/transparent_hugepage/enabled", filepath.Join(root, "sys/class/net/eth0/queues/rx-0/rps_cpus"))
	if f, err := Open(root, "/sys/class/net/eth0/queues/rx-0/rps_cpus", os.O_WRONLY, 0); !errors.Is(err, ErrEscapes) {
		if f != nil {
			f.Close()
		}
		t.Errorf("write through a link to another kernel file: %v, want ErrEscapes", err)
	}
	if _, err := ReadFile(root, "/sys/class/net/eth0/queues/rx-0/rps_cpus"); err != nil {
		t.Errorf("reading is allowed: %v", err)
	}
}
