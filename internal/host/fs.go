package host

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"redline/internal/host/kernel"
)

// FS reads a host's files below a root directory. Every path given to its
// methods is the path as on the host ("/proc/interrupts",
// "/sys/class/net/eth0/mtu"); FS maps it below the root, so the same code
// reads the live machine (root "/") or a fixture tree. /proc and /sys can be
// mapped to their own directories (as node_exporter's --path.procfs and
// --path.sysfs do).
//
// FS records every access in a log, with the bytes it returned. Capture uses
// the log to copy exactly what was read into a new fixture tree, and tests
// use it to check that a snapshot reads no file twice. An FS is safe for
// concurrent use.
type FS struct {
	root, proc, sys string
	live            bool
	// kernel answers what has no file, on the live machine only.
	kernel kernel.Interface

	// recording keeps every access in log, for Capture; off by default:
	// a long-lived reader (steer reads the host every period) would
	// otherwise hold every byte it ever read.
	recording bool
	mu        sync.Mutex
	log       []Access
}

// FSOptions says where an FS finds the host's files. Empty fields default
// to Root's subdirectories, and an empty Root means "/".
type FSOptions struct {
	Root string // the host's "/" (default "/")
	Proc string // the host's /proc (default Root/proc)
	Sys  string // the host's /sys (default Root/sys)
	// Record keeps every access for Capture (and Log).
	Record bool
	// Kernel answers, on the live machine, what no file holds (ethtool,
	// netlink, fd scans); default kernel.Live{}. Tests substitute it.
	Kernel kernel.Interface
}

// AccessKind says what an Access did.
type AccessKind string

// The kinds of access an FS records.
const (
	AccessFile    AccessKind = "file"    // ReadFile
	AccessDir     AccessKind = "dir"     // ReadDir
	AccessLink    AccessKind = "link"    // Readlink
	AccessResolve AccessKind = "resolve" // EvalSymlinks
	AccessStat    AccessKind = "stat"    // Exists
	// AccessVirtual is data that has no file on the live host (an ethtool
	// query, a sysctl read inside another network namespace). Capture
	// writes it under its virtual path so a fixture tree can answer it.
	AccessVirtual AccessKind = "virtual"
)

// Access is one recorded read.
type Access struct {
	Kind AccessKind
	Path string // host path, e.g. "/proc/irq/24/node"
	Data []byte // the bytes read (files, virtual) or the link target (links)
	Err  error  // nil, or the error the read returned
	// Entries is a directory's listing (ReadDir).
	Entries []DirEntry
}

// NewFS returns an FS rooted at root ("/" for the live machine). It fails
// if root is not a readable directory.
func NewFS(root string) (*FS, error) {
	return NewFSWith(FSOptions{Root: root})
}

// NewFSWith returns an FS with separately placed /proc and /sys.
func NewFSWith(o FSOptions) (*FS, error) {
	if o.Root == "" {
		o.Root = "/"
	}
	if o.Proc == "" {
		o.Proc = filepath.Join(o.Root, "proc")
	}
	if o.Sys == "" {
		o.Sys = filepath.Join(o.Root, "sys")
	}
	f := &FS{recording: o.Record}
	var err error
	for _, d := range []struct {
		dst  *string
		name string
		what string
	}{{&f.root, o.Root, "root"}, {&f.proc, o.Proc, "procfs"}, {&f.sys, o.Sys, "sysfs"}} {
		if *d.dst, err = checkDir(d.name, d.what); err != nil {
			return nil, err
		}
	}
	f.live = f.root == "/" && f.proc == "/proc" && f.sys == "/sys"
	if f.live {
		f.kernel = o.Kernel
		if f.kernel == nil {
			f.kernel = kernel.Live{}
		}
	}
	return f, nil
}

func checkDir(dir, what string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%s %q: %w", what, dir, err)
	}
	// Resolve symlinks in the root itself so paths found by walking
	// symlinks below it can be mapped back to host paths.
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	info, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("%s %q is not readable (give an existing directory): %w", what, dir, err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("%s %q is not a directory", what, dir)
	}
	return abs, nil
}

// Root returns the directory that stands for the host's "/".
func (f *FS) Root() string { return f.root }

// Live reports whether f reads the running machine itself (root "/" with
// the standard /proc and /sys). Only a live FS queries the kernel directly
// (ethtool ioctls, entering network namespaces).
func (f *FS) Live() bool { return f.live }

// Path maps a host path onto the directory that holds it.
func (f *FS) Path(hostPath string) string {
	p := path.Clean("/" + hostPath)
	switch {
	case p == "/proc" || strings.HasPrefix(p, "/proc/"):
		return filepath.Join(f.proc, p[len("/proc"):])
	case p == "/sys" || strings.HasPrefix(p, "/sys/"):
		return filepath.Join(f.sys, p[len("/sys"):])
	}
	return filepath.Join(f.root, p)
}

// hostPath maps a real path below one of f's directories back to the host
// path; ok is false if real is outside them.
func (f *FS) hostPath(real string) (string, bool) {
	for _, m := range []struct{ dir, prefix string }{{f.proc, "/proc"}, {f.sys, "/sys"}, {f.root, ""}} {
		if real == m.dir {
			if m.prefix == "" {
				return "/", true
			}
			return m.prefix, true
		}
		d := m.dir
		if d != "/" {
			d += "/"
		}
		if strings.HasPrefix(real, d) {
			return path.Clean(m.prefix + "/" + real[len(d):]), true
		}
	}
	return "", false
}

func (f *FS) record(a Access) {
	if !f.recording {
		return
	}
	f.mu.Lock()
	f.log = append(f.log, a)
	f.mu.Unlock()
}

// Log returns a copy of the accesses recorded so far, in order.
func (f *FS) Log() []Access {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Access(nil), f.log...)
}

// ReadFile returns the contents of a host file. A file that a fixture tree
// marks as unreadable (see Capture) fails with the recorded errno.
func (f *FS) ReadFile(hostPath string) ([]byte, error) {
	data, err := readAll(f.Path(hostPath))
	if err != nil {
		err = f.unreadableMarker(hostPath, err)
	}
	f.record(Access{Kind: AccessFile, Path: hostPath, Data: data, Err: err})
	return data, err
}

// readAll reads a whole file without trusting its size: files in /proc
// report 0 and sysfs attributes 4096.
func readAll(name string) ([]byte, error) {
	fd, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	buf := make([]byte, 0, 512)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := fd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// unreadableMarkerPrefix starts the target of a dangling symlink that
// stands, in a fixture tree, for a file the kernel lists but refuses to
// read (xps_cpus of a single-queue virtio NIC: ENOENT on read).
const unreadableMarkerPrefix = "unreadable:"

var errnoNames = map[string]syscall.Errno{
	"ENOENT": syscall.ENOENT, "EIO": syscall.EIO, "EACCES": syscall.EACCES,
	"EPERM": syscall.EPERM, "EINVAL": syscall.EINVAL, "ENODEV": syscall.ENODEV,
	"EOPNOTSUPP": syscall.EOPNOTSUPP, "ENODATA": syscall.ENODATA,
	"ENXIO": syscall.ENXIO, "EBUSY": syscall.EBUSY,
}

func errnoName(e syscall.Errno) string {
	for name, v := range errnoNames {
		if v == e {
			return name
		}
	}
	return "EIO"
}

// unreadableMarker turns the "no such file" of a marker symlink into the
// errno it records. It only runs on the error path of fixture trees.
func (f *FS) unreadableMarker(hostPath string, err error) error {
	if f.live || !errors.Is(err, iofs.ErrNotExist) {
		return err
	}
	target, lerr := os.Readlink(f.Path(hostPath))
	if lerr != nil || !strings.HasPrefix(target, unreadableMarkerPrefix) {
		return err
	}
	errno, ok := errnoNames[strings.TrimPrefix(target, unreadableMarkerPrefix)]
	if !ok {
		errno = syscall.EIO
	}
	op := "read" // as a sysfs attribute refuses: open works, read fails
	if errno == syscall.EACCES || errno == syscall.EPERM {
		op = "open"
	}
	return &iofs.PathError{Op: op, Path: hostPath, Err: errno}
}

// DirEntry is one name in a directory listing.
type DirEntry struct {
	Name string
	Dir  bool // a directory, or a symlink to one
}

// ReadDir lists a host directory, sorted by name. Symlinks are followed to
// tell directories from files (sysfs links its devices).
func (f *FS) ReadDir(hostPath string) ([]DirEntry, error) {
	real := f.Path(hostPath)
	ents, err := os.ReadDir(real)
	out := make([]DirEntry, 0, len(ents))
	for _, e := range ents {
		d := DirEntry{Name: e.Name(), Dir: e.IsDir()}
		if e.Type()&iofs.ModeSymlink != 0 && !strings.HasPrefix(hostPath, "/proc") {
			if st, serr := os.Stat(filepath.Join(real, e.Name())); serr == nil {
				d.Dir = st.IsDir()
			}
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	f.record(Access{Kind: AccessDir, Path: hostPath, Entries: out, Err: err})
	return out, err
}

// Readlink returns the target of a host symlink, as the kernel shows it
// ("../../devices/virtual/net/lo", "net:[4026531840]", "socket:[1234]").
func (f *FS) Readlink(hostPath string) (string, error) {
	target, err := os.Readlink(f.Path(hostPath))
	f.record(Access{Kind: AccessLink, Path: hostPath, Data: []byte(target), Err: err})
	return target, err
}

// Exists reports whether a host path exists (without reading it).
func (f *FS) Exists(hostPath string) bool {
	_, err := os.Lstat(f.Path(hostPath))
	f.record(Access{Kind: AccessStat, Path: hostPath, Err: err})
	return err == nil
}

// EvalSymlinks returns the host path that hostPath resolves to, following
// every symlink on the way ("/sys/class/net/eth0/device" ->
// "/sys/devices/pci0000:00/0000:00:03.0/virtio2"). Symlinks that lead out
// of the FS's directories are an error.
func (f *FS) EvalSymlinks(hostPath string) (string, error) {
	real, err := filepath.EvalSymlinks(f.Path(hostPath))
	var resolved string
	if err == nil {
		var ok bool
		if resolved, ok = f.hostPath(real); !ok {
			err = fmt.Errorf("resolve %s: %s leads outside %s", hostPath, real, f.root)
		}
	}
	f.record(Access{Kind: AccessResolve, Path: hostPath, Data: []byte(resolved), Err: err})
	return resolved, err
}

// readVirtual answers a virtual path: on the live machine through the
// kernel, on a fixture tree from the file Capture wrote for it.
func (f *FS) readVirtual(vpath string, live func() ([]byte, error)) ([]byte, error) {
	if !f.live {
		data, err := readAll(f.Path(vpath))
		f.record(Access{Kind: AccessFile, Path: vpath, Data: data, Err: err})
		return data, err
	}
	data, err := live()
	f.record(Access{Kind: AccessVirtual, Path: vpath, Data: data, Err: err})
	return data, err
}
