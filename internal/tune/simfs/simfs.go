// Package simfs is a copy of a host's /proc and /sys tree that answers
// writes the way the kernel does: a CPU list written to smp_affinity_list
// reads back in canonical form, a mask written to rps_cpus reads back at
// the file's width, "never" written to a THP file reads back as
// "always madvise [never]", a port range written with a space reads back
// with a tab, and bad values fail with EINVAL. tune's tests apply and roll
// back plans on such trees and require them byte-identical afterwards;
// `redline tune apply --root DIR` rehearses a plan on one.
package simfs

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"redline/internal/host"
	"redline/internal/tune/beneath"
	"redline/internal/tune/kernfmt"
)

// FS is a simulated kernel file tree below Root.
type FS struct {
	Root string
	// MidWrite, when set, is called in every write after the new content
	// is on disk beside name and before it replaces name: a test kills the
	// process there to show that a write is never half done.
	MidWrite func(name string)

	mu       sync.Mutex
	faults   map[string]error
	readOnly []string
	writes   int
}

// New returns a simulated tree rooted at root (a directory holding proc/
// and sys/).
func New(root string) *FS { return &FS{Root: root, faults: map[string]error{}} }

// Fail makes every write to name fail with err (syscall.EIO models an IRQ
// that cannot move).
func (f *FS) Fail(name string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults[name] = err
}

// ReadOnly makes writes below prefix fail with EROFS, as in a container
// whose /proc/sys is mounted read-only.
func (f *FS) ReadOnly(prefix string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.readOnly = append(f.readOnly, prefix)
}

// Writes returns the number of successful writes so far.
func (f *FS) Writes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes
}

func (f *FS) path(name string) string { return filepath.Join(f.Root, name) }

// ReadFile reads name, never through a link out of the tree's proc/ or
// sys/ (see beneath).
func (f *FS) ReadFile(name string) ([]byte, error) {
	b, err := beneath.ReadFile(f.Root, name)
	return b, f.marker(name, err)
}

// unreadablePrefix starts the target of a dangling symlink that stands, in
// a captured fixture tree, for a file the kernel lists but refuses to read
// or write ("unreadable:ENOENT" for xps_cpus of a single-queue virtio NIC);
// see internal/host's fixture format.
const unreadablePrefix = "unreadable:"

var markerErrnos = map[string]syscall.Errno{
	"ENOENT": syscall.ENOENT, "EIO": syscall.EIO, "EACCES": syscall.EACCES,
	"EPERM": syscall.EPERM, "EINVAL": syscall.EINVAL, "ENODEV": syscall.ENODEV,
	"EOPNOTSUPP": syscall.EOPNOTSUPP, "ENODATA": syscall.ENODATA,
	"ENXIO": syscall.ENXIO, "EBUSY": syscall.EBUSY,
}

// marker turns the "no such file" of a marker symlink into its errno.
func (f *FS) marker(name string, err error) error {
	if err == nil || !os.IsNotExist(err) {
		return err
	}
	target, lerr := os.Readlink(f.path(name))
	if lerr != nil || !strings.HasPrefix(target, unreadablePrefix) {
		return err
	}
	errno, ok := markerErrnos[strings.TrimPrefix(target, unreadablePrefix)]
	if !ok {
		errno = syscall.EIO
	}
	return &fs.PathError{Op: "open", Path: name, Err: errno}
}

// ReadDir lists name.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(f.path(name)) }

// CheckWrite reports a missing file, a read-only prefix or an injected
// fault, and asks the kernel (access(2) with W_OK) about the tree itself:
// a copy on a read-only mount is refused in the preview as the writes
// would be refused by apply.
func (f *FS) CheckWrite(name string) error {
	real, err := beneath.Resolve(f.Root, name)
	if err != nil {
		return f.marker(name, err)
	}
	if err := f.blocked(name); err != nil {
		return err
	}
	if err := unix.Access(real, unix.W_OK); err != nil {
		return &fs.PathError{Op: "access", Path: name, Err: err}
	}
	if err := unix.Access(filepath.Dir(real), unix.W_OK); err != nil {
		// The rename that replaces the file needs its directory.
		return &fs.PathError{Op: "access", Path: path.Dir(name), Err: err}
	}
	return nil
}

func (f *FS) blocked(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.readOnly {
		if name == p || strings.HasPrefix(name, strings.TrimSuffix(p, "/")+"/") {
			return &fs.PathError{Op: "write", Path: name, Err: syscall.EROFS}
		}
	}
	return nil
}

// WriteFile stores data the way the kernel would format it on read, and
// updates the files the kernel derives from it (an IRQ's smp_affinity from
// its smp_affinity_list and back; the other dirty_* sysctl of a pair).
// Each file is replaced whole (see store): a process killed at any moment
// leaves it with its old content or its new one, as the kernel's files.
func (f *FS) WriteFile(name string, data []byte) error {
	if err := f.blocked(name); err != nil {
		return err
	}
	f.mu.Lock()
	fault := f.faults[name]
	f.mu.Unlock()
	if fault != nil {
		return &fs.PathError{Op: "write", Path: name, Err: fault}
	}
	cur, err := f.ReadFile(name)
	if err != nil {
		return err
	}
	stored, side, err := format(name, string(cur), string(data), f.ReadFile)
	if err != nil {
		return &fs.PathError{Op: "write", Path: name, Err: err}
	}
	// The file written first, the files it affects after: a process
	// killed in between leaves the written file holding its new value,
	// which rollback restores, and that restore puts the others back.
	if err := f.store(name, stored); err != nil {
		return err
	}
	for other, v := range side {
		if err := f.store(other, v); err != nil {
			return err
		}
	}
	f.mu.Lock()
	f.writes++
	f.mu.Unlock()
	return nil
}

// tempName is where store puts a file's new content before the rename.
// One name per file: a write killed before its rename leaves at most this
// one file, which the next write over it, or Recover, removes.
func tempName(base string) string { return "." + base + ".redline-tmp" }

// store replaces name's content atomically: the new bytes go to a
// temporary file beside it, which is then renamed over it. Truncating and
// writing in place would leave an empty file to a process killed between
// the two (issue 10).
func (f *FS) store(name, content string) error {
	dir, err := beneath.Open(f.Root, path.Dir(name), unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer dir.Close()
	dfd, base := int(dir.Fd()), path.Base(name)
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return &fs.PathError{Op: "write", Path: name, Err: syscall.EINVAL}
	}
	tmp := tempName(base)
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, st.Mode&0o7777)
	if err != nil {
		return &fs.PathError{Op: "create", Path: tmp, Err: err}
	}
	w := os.NewFile(uintptr(fd), tmp)
	_, werr := w.WriteString(content)
	if err := w.Chmod(os.FileMode(st.Mode & 0o777)); werr == nil {
		werr = err
	}
	if err := w.Close(); werr == nil {
		werr = err
	}
	if werr != nil {
		unix.Unlinkat(dfd, tmp, 0)
		return werr
	}
	if f.MidWrite != nil {
		f.MidWrite(name)
	}
	if err := unix.Renameat(dfd, tmp, dfd, base); err != nil {
		return &fs.PathError{Op: "rename", Path: name, Err: err}
	}
	return nil
}

// Recover removes what a write killed before its rename left beside name.
// Rollback calls it for every change it looks at, so a rehearsal tree is
// byte-identical afterwards.
func (f *FS) Recover(name string) error {
	dir, err := beneath.Open(f.Root, path.Dir(name), unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil // nothing there to clean
	}
	defer dir.Close()
	err = unix.Unlinkat(int(dir.Fd()), tempName(path.Base(name)), 0)
	if err != nil && err != unix.ENOENT {
		return &fs.PathError{Op: "remove", Path: tempName(name), Err: err}
	}
	return nil
}

// coupled are the dirty-writeback sysctl pairs of which the kernel keeps
// only one non-zero: writing a new value to one zeroes the other, and the
// bytes forms reject 0 with EINVAL (tuned PR #882 tripped on exactly this
// while restoring).
var coupled = map[string]string{
	"/proc/sys/vm/dirty_bytes":            "/proc/sys/vm/dirty_ratio",
	"/proc/sys/vm/dirty_ratio":            "/proc/sys/vm/dirty_bytes",
	"/proc/sys/vm/dirty_background_bytes": "/proc/sys/vm/dirty_background_ratio",
	"/proc/sys/vm/dirty_background_ratio": "/proc/sys/vm/dirty_background_bytes",
}

// format returns the new content of name after data is written over cur,
// and other files the write changes as a side effect.
func format(name, cur, data string, read func(string) ([]byte, error)) (string, map[string]string, error) {
	base := path.Base(name)
	switch {
	case strings.HasSuffix(base, "_list"):
		cpus, err := host.ParseCPUList(data)
		if err != nil || cpus.IsEmpty() {
			return "", nil, syscall.EINVAL
		}
		return cpus.List() + "\n", irqTwin(name, cpus, read), nil
	case maskFiles[base]:
		cpus, err := host.ParseCPUMask(data)
		if err != nil {
			return "", nil, syscall.EINVAL
		}
		// The kernel prints masks nr_cpu_ids bits wide; keep the file's
		// width.
		return cpus.MaskWidth(hexDigits(cur)*4) + "\n", irqTwin(name, cpus, read), nil
	}
	if opts, _, ok := kernfmt.Choices(cur); ok {
		return choose(opts, strings.TrimSpace(data))
	}
	v, err := numericFields(name, cur, data)
	if err != nil {
		return "", nil, err
	}
	if err := coupledCheck(name, v); err != nil {
		return "", nil, err
	}
	if v == cur {
		return v, nil, nil
	}
	return v, coupledSide(name), nil
}

// irqTwin is the other view of an IRQ's affinity: the kernel shows one
// setting as both /proc/irq/N/smp_affinity (a mask) and smp_affinity_list,
// so writing either changes both. Nil when name is neither or the twin is
// not in the tree.
func irqTwin(name string, cpus host.CPUSet, read func(string) ([]byte, error)) map[string]string {
	dir, base := path.Split(name)
	if !strings.HasPrefix(dir, "/proc/irq/") {
		return nil
	}
	switch base {
	case "smp_affinity_list":
		twin := dir + "smp_affinity"
		if cur, err := read(twin); err == nil {
			return map[string]string{twin: cpus.MaskWidth(hexDigits(string(cur))*4) + "\n"}
		}
	case "smp_affinity":
		twin := dir + "smp_affinity_list"
		if _, err := read(twin); err == nil {
			return map[string]string{twin: cpus.List() + "\n"}
		}
	}
	return nil
}

func hexDigits(mask string) int { return len(strings.ReplaceAll(strings.TrimSpace(mask), ",", "")) }

// maskFiles hold hex CPU masks.
var maskFiles = map[string]bool{
	"smp_affinity": true, "default_smp_affinity": true, "rps_cpus": true,
	"xps_cpus": true, "xps_rxqs": true, "rps_default_mask": true,
}

func choose(options []string, want string) (string, map[string]string, error) {
	for _, o := range options {
		if o == want {
			return kernfmt.FormatChoices(options, want) + "\n", nil, nil
		}
	}
	return "", nil, syscall.EINVAL
}

// numericFields keeps the kernel's separator (a tab between the values of
// multi-value sysctls) and rejects a different number of integers where
// the file holds integers.
func numericFields(name, cur, data string) (string, error) {
	old, nw := strings.Fields(cur), strings.Fields(data)
	if !lists[name] && allInts(old) && (len(nw) != len(old) || !allInts(nw)) {
		return "", syscall.EINVAL
	}
	return strings.Join(nw, "\t") + "\n", nil
}

// lists are sysctls holding a comma-separated list, which may be emptied;
// "6379" there is a list of one, not an integer.
var lists = map[string]bool{
	"/proc/sys/net/ipv4/ip_local_reserved_ports": true,
}

func allInts(fields []string) bool {
	for _, f := range fields {
		if _, err := strconv.ParseInt(f, 10, 64); err != nil {
			return false
		}
	}
	return len(fields) > 0
}

func coupledSide(name string) map[string]string {
	if other, ok := coupled[name]; ok {
		return map[string]string{other: "0\n"}
	}
	return nil
}

func coupledCheck(name, v string) error {
	if _, ok := coupled[name]; ok && strings.HasSuffix(name, "_bytes") && strings.TrimSpace(v) == "0" {
		return syscall.EINVAL
	}
	return nil
}
