package host

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"redline/internal/atomicfile"
	"regexp"
	"strings"
	"syscall"
)

// CaptureStats counts what Capture wrote.
type CaptureStats struct {
	Files       int // regular files, with the bytes that were read
	Links       int // symlinks (sysfs device links, /proc/self, ns and fd links)
	Dirs        int // directories that were listed
	Unreadable  int // files that exist but could not be read (kept as markers)
	Virtual     int // ethtool answers, namespaced sysctls, the sock_diag dump
	BytesCopied int64
}

// Capture writes what f has read so far into dest as a fixture tree: the
// bytes each read returned (not the file as it is now), the symlinks on
// the way to them (so walking up a sysfs device path works the same), the
// directories listed, and markers for files that exist but could not be
// read. Reading the tree with NewFS(dest) gives the same snapshot. dest
// must not exist or be an empty directory.
func Capture(f *FS, dest string) (CaptureStats, error) {
	var st CaptureStats
	if !f.recording {
		return st, fmt.Errorf("capture: the FS was not opened with FSOptions.Record, so nothing it read was kept")
	}
	if err := prepareDest(dest); err != nil {
		return st, err
	}
	c := &capturer{f: f, dest: dest, st: &st}
	done := map[string]bool{}
	var dirs []Access
	for _, a := range f.Log() {
		if a.Kind == AccessDir && a.Err == nil {
			dirs = append(dirs, a)
		}
		key := string(a.Kind) + "\x00" + a.Path
		if done[key] {
			continue
		}
		done[key] = true
		if err := c.capture(a); err != nil {
			return st, fmt.Errorf("capture %s: %w", a.Path, err)
		}
	}
	for _, a := range dirs {
		if err := c.placeholders(a); err != nil {
			return st, fmt.Errorf("capture %s: %w", a.Path, err)
		}
	}
	return st, nil
}

// numberedEntry matches the listing entries the readers enumerate by
// number (node0, policy3, state1, rx-0, msi_irqs' 38, a pid).
var numberedEntry = regexp.MustCompile(`^[a-z_-]*[0-9]+$`)

// placeholders recreates the numbered entries of a listed directory that
// nothing was read from (msi_irqs/38), empty, so the listing reads the
// same. Other names are left out: an empty /proc/kcore would not be the
// truth.
func (c *capturer) placeholders(a Access) error {
	p, err := c.materialize(a.Path, true)
	if err != nil {
		return err
	}
	for _, e := range a.Entries {
		dst := c.destPath(path.Join(p, e.Name))
		if !numberedEntry.MatchString(e.Name) {
			continue
		}
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		if e.Dir {
			err = os.MkdirAll(dst, 0o755)
		} else {
			err = os.WriteFile(dst, nil, 0o644)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func prepareDest(dest string) error {
	if err := CheckCaptureDest(dest); err != nil {
		return err
	}
	return atomicfile.OwnDir(dest, 0o755)
}

// CheckCaptureDest is Capture's rule for its destination, for a check
// before any reading: a new directory or an empty one.
func CheckCaptureDest(dest string) error {
	ents, err := os.ReadDir(dest)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("capture directory %s: %w", dest, err)
	case len(ents) > 0:
		return fmt.Errorf("capture directory %s is not empty (give a new directory)", dest)
	}
	return nil
}

type capturer struct {
	f    *FS
	dest string
	st   *CaptureStats
}

func (c *capturer) capture(a Access) error {
	switch a.Kind {
	case AccessVirtual:
		if a.Err != nil {
			return nil
		}
		c.st.Virtual++
		return c.writeFile(path.Clean(a.Path), a.Data)
	case AccessFile:
		return c.captureFile(a)
	case AccessDir:
		if a.Err != nil {
			return nil
		}
		p, err := c.materialize(a.Path, true)
		if err != nil {
			return err
		}
		c.st.Dirs++
		return os.MkdirAll(c.destPath(p), 0o755)
	case AccessLink:
		if a.Err != nil {
			return nil
		}
		_, err := c.materialize(a.Path, false)
		return err
	case AccessResolve, AccessStat:
		return c.captureExisting(a)
	}
	return nil
}

func (c *capturer) captureFile(a Access) error {
	if a.Err == nil {
		p, err := c.materialize(a.Path, true)
		if err != nil {
			return err
		}
		c.st.Files++
		c.st.BytesCopied += int64(len(a.Data))
		return c.writeFile(p, a.Data)
	}
	// A file that exists but refused to be read becomes a marker symlink
	// whose target names the errno (FS.ReadFile turns it back).
	if _, err := os.Lstat(c.f.Path(a.Path)); err != nil {
		return nil // really absent: absent in the tree too
	}
	var errno syscall.Errno
	if !errors.As(a.Err, &errno) {
		errno = syscall.EIO
	}
	p, err := c.materialize(path.Dir(a.Path), true)
	if err != nil {
		return err
	}
	link := c.destPath(path.Join(p, path.Base(a.Path)))
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return err
	}
	c.st.Unreadable++
	return symlinkOnce(unreadableMarkerPrefix+errnoName(errno), link)
}

// captureExisting recreates a path whose existence (or symlink chain) was
// looked at, without contents: a directory, an empty file, or the link.
func (c *capturer) captureExisting(a Access) error {
	if a.Err != nil {
		return nil
	}
	p, err := c.materialize(a.Path, true)
	if err != nil {
		return err
	}
	info, err := os.Stat(c.f.Path(p))
	if err != nil {
		return nil
	}
	dst := c.destPath(p)
	if info.IsDir() {
		return os.MkdirAll(dst, 0o755)
	}
	if _, err := os.Lstat(dst); err == nil {
		return nil
	}
	return c.writeFile(p, nil)
}

// materialize walks hostPath component by component on the source,
// recreating each symlink it meets in dest, and returns the path with the
// links resolved (where the contents go). With followLast false a final
// symlink is recreated but not followed (ns/net, fd/N links).
func (c *capturer) materialize(hostPath string, followLast bool) (string, error) {
	parts := strings.Split(strings.Trim(path.Clean(hostPath), "/"), "/")
	cur := "/"
	for hops := 0; len(parts) > 0; {
		next := path.Join(cur, parts[0])
		parts = parts[1:]
		info, err := os.Lstat(c.f.Path(next))
		if err != nil || info.Mode()&iofs.ModeSymlink == 0 {
			cur = next
			continue
		}
		target, err := os.Readlink(c.f.Path(next))
		if err != nil {
			return "", err
		}
		if err := c.writeLink(next, target); err != nil {
			return "", err
		}
		if len(parts) == 0 && !followLast {
			return next, nil
		}
		if hops++; hops > 40 {
			return "", fmt.Errorf("too many symlinks under %s", hostPath)
		}
		resolved := target
		if !path.IsAbs(target) {
			resolved = path.Join(cur, target)
		}
		parts = append(strings.Split(strings.Trim(path.Clean(resolved), "/"), "/"), parts...)
		cur = "/"
	}
	return cur, nil
}

func (c *capturer) destPath(hostPath string) string {
	return filepath.Join(c.dest, filepath.FromSlash(hostPath))
}

func (c *capturer) writeLink(hostPath, target string) error {
	dst := c.destPath(hostPath)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if _, err := os.Lstat(dst); err == nil {
		return nil
	}
	c.st.Links++
	return symlinkOnce(target, dst)
}

func (c *capturer) writeFile(hostPath string, data []byte) error {
	dst := c.destPath(hostPath)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if info, err := os.Lstat(dst); err == nil && info.Mode()&iofs.ModeSymlink != 0 {
		return nil // never write through a link
	}
	return os.WriteFile(dst, data, 0o644)
}

func symlinkOnce(target, link string) error {
	err := os.Symlink(target, link)
	if errors.Is(err, iofs.ErrExist) {
		return nil
	}
	return err
}
