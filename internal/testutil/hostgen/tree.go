// Package hostgen generates the modelled fixture trees in testdata/hosts
// (machines we cannot capture ourselves: a Kunpeng 920, a 2-socket x86
// with an mlx5 NIC, a multi-queue virtio VM). Each model is a Machine
// description; Build turns it into the files the kernel would show, in the
// kernel's formats. Run it with `go run ./tools/genhosts`; a test in
// internal/host checks that the committed trees match.
package hostgen

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Tree is a fixture tree in memory: files and symlinks by host path.
type Tree struct {
	Files map[string][]byte
	Links map[string]string
}

// NewTree returns an empty tree.
func NewTree() *Tree { return &Tree{Files: map[string][]byte{}, Links: map[string]string{}} }

// File adds a file; content gets no newline added.
func (t *Tree) File(path, content string) { t.Files[path] = []byte(content) }

// Line adds a one-line file, newline-terminated as sysfs prints it.
func (t *Tree) Line(path string, format string, args ...any) {
	t.File(path, fmt.Sprintf(format, args...)+"\n")
}

// Link adds a symlink.
func (t *Tree) Link(path, target string) { t.Links[path] = target }

// WriteTo writes the tree below dir, which must not hold anything else
// that matters: existing files are replaced.
func (t *Tree) WriteTo(dir string) error {
	for _, p := range slices.Sorted(maps.Keys(t.Files)) {
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, t.Files[p], 0o644); err != nil {
			return err
		}
	}
	for _, p := range slices.Sorted(maps.Keys(t.Links)) {
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		os.Remove(dst)
		if err := os.Symlink(t.Links[p], dst); err != nil {
			return err
		}
	}
	return nil
}

// Diff lists how dir differs from the tree (missing, extra or changed
// entries); empty means identical. Files named in keep (SOURCE, README)
// are allowed in dir without being in the tree.
func (t *Tree) Diff(dir string, keep ...string) ([]string, error) {
	var diffs []string
	seen := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := "/" + filepath.ToSlash(strings.TrimPrefix(p, dir+string(filepath.Separator)))
		seen[rel] = true
		if d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			if want, ok := t.Links[rel]; !ok || want != target {
				diffs = append(diffs, "link "+rel+" differs or is extra")
			}
			return nil
		}
		data, _ := os.ReadFile(p)
		if want, ok := t.Files[rel]; !ok {
			for _, k := range keep {
				if rel == k {
					return nil
				}
			}
			diffs = append(diffs, "extra file "+rel)
		} else if !bytes.Equal(want, data) {
			diffs = append(diffs, "changed file "+rel)
		}
		return nil
	})
	for _, m := range []map[string]bool{keysOf(t.Files), keysOf(t.Links)} {
		for p := range m {
			if !seen[p] {
				diffs = append(diffs, "missing "+p)
			}
		}
	}
	sort.Strings(diffs)
	return diffs, err
}

func keysOf[V any](m map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}
