// Package beneath opens kernel files below a root without following links
// out of /proc or /sys: "/proc/irq/24/smp_affinity_list" below root "/" is
// resolved with openat2(RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS) from the
// root's proc directory, so /proc/self/root/..., /proc/PID/cwd/... or a
// planted symlink in a rehearsal tree can never reach a file elsewhere.
// tune (the live host) and simfs (rehearsal trees) both open through it.
package beneath

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrEscapes marks a name whose resolution would leave its tree.
var ErrEscapes = errors.New("resolves outside /proc or /sys (through a symlink or a magic link); refused")

// split returns the tree ("proc" or "sys") of an absolute kernel name and
// the rest of it.
func split(name string) (tree, rest string, err error) {
	clean := filepath.Clean(name)
	if clean != name || !filepath.IsAbs(name) {
		return "", "", fmt.Errorf("%q: not a clean absolute path", name)
	}
	tree, rest, _ = strings.Cut(strings.TrimPrefix(name, "/"), "/")
	if (tree != "proc" && tree != "sys") || rest == "" {
		return "", "", fmt.Errorf("%q: not below /proc or /sys", name)
	}
	return tree, rest, nil
}

// Open opens name (an absolute path as on the live host) below root with
// flags (os.O_RDONLY, os.O_WRONLY|os.O_TRUNC, ...) and perm for O_CREATE.
func Open(root, name string, flags int, perm uint32) (*os.File, error) {
	tree, rest, err := split(name)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	dir, err := unix.Open(filepath.Join(root, tree), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: filepath.Join(root, tree), Err: err}
	}
	defer unix.Close(dir)
	how := unix.OpenHow{
		Flags:   uint64(flags) | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	if flags&os.O_CREATE != 0 {
		how.Mode = uint64(perm)
	}
	fd, err := unix.Openat2(dir, rest, &how)
	// With RESOLVE_BENEATH the kernel refuses with EAGAIN when a rename or
	// a mount anywhere on the machine raced the lookup (openat2(2)): the
	// lookup is then simply tried again, a bounded number of times.
	for try := 0; errors.Is(err, unix.EAGAIN) && try < 64; try++ {
		fd, err = unix.Openat2(dir, rest, &how)
	}
	if errors.Is(err, unix.ENOSYS) {
		return fallback(root, name, flags, perm)
	}
	if errors.Is(err, unix.EXDEV) || (errors.Is(err, unix.ELOOP) && !noFollowLeaf(flags)) {
		return nil, &os.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w (%v)", ErrEscapes, err)}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(fd), filepath.Join(root, name))
	if flags&(os.O_WRONLY|os.O_RDWR|unix.O_PATH) != 0 {
		if err := keepsTail(f, rest); err != nil {
			f.Close()
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
	}
	return f, nil
}

// tailParts is how many trailing components of a name the file opened for
// it must keep: a link inside the tree may move the head
// (/sys/class/net/eth0 -> ../../devices/.../net/eth0) but not what the
// allow-list checked ("eth0/queues/rx-0/rps_cpus" keeps its last three).
const tailParts = 3

// keepsTail checks that f, opened for writing (or as a target to check),
// is the file the name's allow-listed shape describes: its resolved path
// ends with the name's last components. A link that lands elsewhere in
// /proc or /sys fails.
func keepsTail(f *os.File, rest string) error {
	real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil {
		return nil // no /proc to ask: openat2 already kept it in the tree
	}
	parts := strings.Split(rest, "/")
	if len(parts) > tailParts {
		parts = parts[len(parts)-tailParts:]
	}
	if tail := "/" + strings.Join(parts, "/"); !strings.HasSuffix(real, tail) {
		return fmt.Errorf("%w: it resolves to %s", ErrEscapes, real)
	}
	return nil
}

func noFollowLeaf(flags int) bool { return flags&unix.O_NOFOLLOW != 0 }

// fallback is for kernels before 5.6 (no openat2): resolve every link and
// require the result to stay in the tree.
func fallback(root, name string, flags int, perm uint32) (*os.File, error) {
	tree, _, _ := split(name)
	base, err := filepath.EvalSymlinks(filepath.Join(root, tree))
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(filepath.Join(root, name))
	if err != nil && flags&os.O_CREATE != 0 {
		var dir string
		if dir, err = filepath.EvalSymlinks(filepath.Join(root, filepath.Dir(name))); err == nil {
			real = filepath.Join(dir, filepath.Base(name))
		}
	}
	if err != nil {
		return nil, err
	}
	if real != base && !strings.HasPrefix(real, base+"/") {
		return nil, &os.PathError{Op: "open", Path: name, Err: ErrEscapes}
	}
	return os.OpenFile(real, flags, os.FileMode(perm))
}

// ReadFile reads name below root.
func ReadFile(root, name string) ([]byte, error) {
	f, err := Open(root, name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Resolve checks that name below root exists and resolves inside its tree,
// and returns the path of what it resolves to (for access(2)).
func Resolve(root, name string) (string, error) {
	f, err := Open(root, name, unix.O_PATH, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil {
		return filepath.Join(root, name), nil
	}
	return real, nil
}
