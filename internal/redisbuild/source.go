package redisbuild

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DebianSource is the Source value that builds the distribution's source
// package (apt-get source redis).
const DebianSource = "debian"

// source is a resolved source: what it is, its hash, and how to lay it out
// in a build directory.
type source struct {
	kind    string // tree, tarball, debian
	path    string // the tree, the tarball, or the .dsc
	sha256  string
	version string
}

var tarballSuffixes = []string{".tar.gz", ".tgz", ".tar.xz", ".tar.bz2", ".tar"}

// resolveSource finds the source and hashes it; "debian" fetches the
// source package into the cache first (fetchDebian).
func resolveSource(ctx context.Context, spec string, r *runner) (source, error) {
	if spec == DebianSource {
		return fetchDebian(ctx, r)
	}
	p, err := filepath.Abs(spec)
	if err != nil {
		return source{}, err
	}
	st, err := os.Stat(p)
	if err != nil {
		return source{}, SpecError{fmt.Errorf("build: source %s: %w (a Redis source tree, a release tarball, or debian)", spec, err)}
	}
	if st.IsDir() {
		if _, err := os.Stat(filepath.Join(p, "src", "server.c")); err != nil {
			return source{}, SpecError{fmt.Errorf("build: source %s is not a Redis source tree (no src/server.c)", spec)}
		}
		h, err := hashTree(p)
		return source{kind: "tree", path: p, sha256: h}, err
	}
	if !hasAnySuffix(p, tarballSuffixes) {
		return source{}, SpecError{fmt.Errorf("build: source %s is neither a directory nor a tarball (%s)", spec, strings.Join(tarballSuffixes, ", "))}
	}
	h, err := hashFile(p)
	return source{kind: "tarball", path: p, sha256: h, version: tarballVersion(p)}, err
}

// extract lays the source out in dest (which must not exist yet).
func (s source) extract(ctx context.Context, r *runner, dest string) error {
	switch s.kind {
	case "debian":
		// dpkg-source applies the distribution's patches (its security fixes).
		return r.run(ctx, "", "dpkg-source", "--no-check", "-x", s.path, dest)
	case "tarball":
		if err := os.MkdirAll(dest, 0o755); err != nil {
			return err
		}
		return r.run(ctx, "", "tar", "-xf", s.path, "-C", dest, "--strip-components=1", "--no-same-owner")
	}
	return copyTree(s.path, dest)
}

func tarballVersion(p string) string {
	base := filepath.Base(p)
	for _, suf := range tarballSuffixes {
		base = strings.TrimSuffix(base, suf)
	}
	return strings.TrimPrefix(base, "redis-")
}

// skipInTree says which files of a source tree are build outputs, not
// source: they are neither hashed nor copied, so a tree someone built in
// hashes as it did before.
func skipInTree(rel string, d fs.DirEntry) bool {
	name := d.Name()
	if d.IsDir() {
		return name == ".git"
	}
	return hasAnySuffix(name, []string{".o", ".a", ".d", ".gcda", ".gcno", ".profraw", ".profdata"}) ||
		strings.HasPrefix(name, ".make-") || strings.HasPrefix(rel, "src/redis-")
}

// walkTree calls fn for every source file of the tree, in lexical order.
func walkTree(root string, fn func(rel string, d fs.DirEntry) error) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		if skipInTree(rel, d) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		return fn(rel, d)
	})
}

func hashTree(root string) (string, error) {
	h := sha256.New()
	err := walkTree(root, func(rel string, d fs.DirEntry) error {
		if !d.Type().IsRegular() {
			fmt.Fprintf(h, "%s\x00%v\x00", rel, d.Type())
			return nil
		}
		fmt.Fprintf(h, "%s\x00", rel)
		return copyFileTo(h, filepath.Join(root, rel))
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

func copyTree(root, dest string) error {
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	return walkTree(root, func(rel string, d fs.DirEntry) error {
		src, dst := filepath.Join(root, rel), filepath.Join(dest, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		case !d.Type().IsRegular():
			return nil
		}
		f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, info.Mode().Perm()&0o755)
		if err != nil {
			return err
		}
		if err := copyFileTo(f, src); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
}

func copyFileTo(w io.Writer, p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

func hashFile(p string) (string, error) {
	h := sha256.New()
	if err := copyFileTo(h, p); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hasAnySuffix(s string, sufs []string) bool {
	for _, suf := range sufs {
		if strings.HasSuffix(s, suf) {
			return true
		}
	}
	return false
}

// dscVersion reads the Version: field of a Debian source control file.
func dscVersion(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Version:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
