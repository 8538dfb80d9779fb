package simfs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestKernelFormatting(t *testing.T) {
	cases := []struct {
		name, before, write, after string
		err                        error
	}{
		{"/proc/irq/24/smp_affinity_list", "0-7\n", "3,1,2", "1-3\n", nil},
		{"/proc/irq/24/smp_affinity_list", "0-7\n", "x", "", syscall.EINVAL},
		{"/proc/irq/24/smp_affinity_list", "0-7\n", "", "", syscall.EINVAL},
		{"/proc/irq/24/smp_affinity", "00000000,000000ff\n", "3", "00000000,00000003\n", nil},
		{"/sys/class/net/eth0/queues/rx-0/rps_cpus", "00\n", "f", "0f\n", nil},
		{"/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n", "never", "always madvise [never]\n", nil},
		{"/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n", "sometimes", "", syscall.EINVAL},
		{"/proc/sys/net/ipv4/ip_local_port_range", "32768\t60999\n", "1024 65000", "1024\t65000\n", nil},
		{"/proc/sys/net/ipv4/ip_local_port_range", "32768\t60999\n", "1024", "", syscall.EINVAL},
		{"/proc/sys/net/core/somaxconn", "4096\n", "many", "", syscall.EINVAL},
		{"/proc/sys/kernel/core_pattern", "core\n", "|/bin/x %p", "|/bin/x\t%p\n", nil},
		{"/proc/sys/vm/dirty_bytes", "0\n", "0", "", syscall.EINVAL},
	}
	for _, c := range cases {
		root := t.TempDir()
		p := filepath.Join(root, c.name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(c.before), 0o644)
		err := New(root).WriteFile(c.name, []byte(c.write))
		if !errors.Is(err, c.err) || (err != nil) != (c.err != nil) {
			t.Errorf("write %q to %s: error %v, want %v", c.write, c.name, err, c.err)
			continue
		}
		got, _ := os.ReadFile(p)
		if c.err == nil && string(got) != c.after {
			t.Errorf("write %q to %s: reads %q, want %q", c.write, c.name, got, c.after)
		}
		if c.err != nil && string(got) != c.before {
			t.Errorf("a failed write changed %s to %q", c.name, got)
		}
	}
}

func TestCoupledAndFaults(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "proc/sys/vm"), 0o755)
	os.WriteFile(filepath.Join(root, "proc/sys/vm/dirty_bytes"), []byte("0\n"), 0o644)
	os.WriteFile(filepath.Join(root, "proc/sys/vm/dirty_ratio"), []byte("20\n"), 0o644)
	f := New(root)
	if err := f.WriteFile("/proc/sys/vm/dirty_bytes", []byte("1000000")); err != nil {
		t.Fatal(err)
	}
	if b, _ := f.ReadFile("/proc/sys/vm/dirty_ratio"); string(b) != "0\n" {
		t.Errorf("dirty_ratio = %q after writing dirty_bytes", b)
	}
	if err := f.WriteFile("/proc/sys/vm/dirty_ratio", []byte("20")); err != nil {
		t.Fatal(err)
	}
	if b, _ := f.ReadFile("/proc/sys/vm/dirty_bytes"); string(b) != "0\n" {
		t.Errorf("dirty_bytes = %q after writing dirty_ratio", b)
	}
	f.Fail("/proc/sys/vm/dirty_ratio", syscall.EIO)
	if err := f.WriteFile("/proc/sys/vm/dirty_ratio", []byte("10")); !errors.Is(err, syscall.EIO) {
		t.Errorf("injected fault: %v", err)
	}
	f.ReadOnly("/proc/sys")
	if err := f.CheckWrite("/proc/sys/vm/dirty_bytes"); !errors.Is(err, syscall.EROFS) {
		t.Errorf("read-only prefix: %v", err)
	}
	if err := f.CheckWrite("/proc/sys/vm/nope"); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
	if f.Writes() != 2 {
		t.Errorf("Writes() = %d, want 2", f.Writes())
	}
}

func TestUnreadableMarker(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sys/class/net/eth0/queues/tx-0")
	os.MkdirAll(dir, 0o755)
	os.Symlink("unreadable:ENOENT", filepath.Join(dir, "xps_cpus"))
	os.Symlink("unreadable:EWHAT", filepath.Join(dir, "other"))
	f := New(root)
	if _, err := f.ReadFile("/sys/class/net/eth0/queues/tx-0/xps_cpus"); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("read marker: %v", err)
	}
	if err := f.WriteFile("/sys/class/net/eth0/queues/tx-0/xps_cpus", []byte("1")); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("write marker: %v", err)
	}
	if _, err := f.ReadFile("/sys/class/net/eth0/queues/tx-0/other"); !errors.Is(err, syscall.EIO) {
		t.Errorf("unknown errno marker: %v", err)
	}
}

func TestListSysctlMayBeEmptied(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "proc/sys/net/ipv4/ip_local_reserved_ports")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("6379\n"), 0o644)
	if err := New(root).WriteFile("/proc/sys/net/ipv4/ip_local_reserved_ports", []byte("\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "\n" {
		t.Errorf("emptied list reads %q", b)
	}
	os.WriteFile(filepath.Join(root, "proc/sys/net/ipv4/somaxconn"), []byte("4096\n"), 0o644)
	if err := New(root).WriteFile("/proc/sys/net/ipv4/somaxconn", []byte("\n")); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("an integer sysctl emptied: %v", err)
	}
}

// Issue 10 item 4: the kernel shows an IRQ's affinity as both
// smp_affinity and smp_affinity_list; a write to either changes both.
func TestIRQAffinityTwins(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "proc/irq/24")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "smp_affinity_list"), []byte("0-7\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "smp_affinity"), []byte("00000000,000000ff\n"), 0o644)
	f := New(root)
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return string(b)
	}
	if err := f.WriteFile("/proc/irq/24/smp_affinity_list", []byte("1,3\n")); err != nil {
		t.Fatal(err)
	}
	if got := read("smp_affinity"); got != "00000000,0000000a\n" {
		t.Errorf("smp_affinity after writing the list 1,3: %q", got)
	}
	if err := f.WriteFile("/proc/irq/24/smp_affinity", []byte("30\n")); err != nil {
		t.Fatal(err)
	}
	if got := read("smp_affinity_list"); got != "4-5\n" {
		t.Errorf("smp_affinity_list after writing the mask 30: %q", got)
	}
}

// Issue 10 item 4: a write replaces the file whole. Killed after the new
// content is on disk but before it is in place, the file still holds its
// old content (never an empty file), and Recover removes the leftover.
func TestWriteIsAtomic(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "proc/sys/net/core/somaxconn")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("4096\n"), 0o640)
	f := New(root)
	var during string
	f.MidWrite = func(name string) {
		b, _ := os.ReadFile(p)
		during = string(b)
		panic("killed")
	}
	func() {
		defer func() { recover() }()
		f.WriteFile("/proc/sys/net/core/somaxconn", []byte("8192\n"))
	}()
	if during != "4096\n" {
		t.Errorf("in the middle of the write the file holds %q, want the old content", during)
	}
	if b, _ := os.ReadFile(p); string(b) != "4096\n" {
		t.Errorf("after a write killed half way the file holds %q, want the old content", b)
	}
	if err := f.Recover("/proc/sys/net/core/somaxconn"); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("left beside the file: %v", entries)
	}
	f.MidWrite = nil
	if err := f.WriteFile("/proc/sys/net/core/somaxconn", []byte("8192\n")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v after the write, want 0640", st.Mode().Perm())
	}
}
