package redisbuild

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// aptSourceDirs are where the system's apt sources are read from; the
// deb-src entries are derived from their deb entries.
var aptSourceDirs = struct{ list, parts string }{"/etc/apt/sources.list", "/etc/apt/sources.list.d"}

// fetchDebian downloads the distribution's redis source package into the
// cache: <cache>/debian/apt holds deb-src entries copied from the system's
// deb entries and their package lists (the system's own apt configuration
// is never changed), <cache>/debian/pkg the .dsc and its tarballs. A
// package already there is used again (remove the directory to fetch a
// newer one). One fetch at a time (two builds, or tests in parallel, would
// share apt's lists and lock): the second waits, then finds the first's.
func fetchDebian(ctx context.Context, r *runner) (source, error) {
	root := filepath.Join(r.cache, "debian")
	pkg := filepath.Join(root, "pkg")
	if dsc := findDSC(pkg); dsc != "" {
		return debianSource(dsc)
	}
	if err := os.MkdirAll(r.cache, 0o755); err != nil {
		return source{}, fmt.Errorf("build: cache %s: %w", r.cache, err)
	}
	unlock, err := lockKey(ctx, root+".lock")
	if err != nil {
		return source{}, err
	}
	defer unlock()
	if dsc := findDSC(pkg); dsc != "" {
		return debianSource(dsc)
	}
	apt := filepath.Join(root, "apt")
	lists := filepath.Join(apt, "lists")
	if err := os.MkdirAll(filepath.Join(lists, "partial"), 0o755); err != nil {
		return source{}, err
	}
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		return source{}, err
	}
	if err := writeDebSrc(filepath.Join(apt, "sources")); err != nil {
		return source{}, err
	}
	opts := []string{"-o", "Dir::Etc::SourceList=/dev/null", "-o", "Dir::Etc::SourceParts=" + filepath.Join(apt, "sources"),
		"-o", "Dir::State::Lists=" + lists, "-o", "APT::Sandbox::User=root"}
	if err := r.run(ctx, "", "apt-get", append(append([]string{}, opts...), "-q", "update")...); err != nil {
		return source{}, fmt.Errorf("build: apt-get update (deb-src): %w", err)
	}
	if err := r.run(ctx, pkg, "apt-get", append(append([]string{}, opts...), "-q", "source", "--download-only", "redis")...); err != nil {
		return source{}, fmt.Errorf("build: apt-get source redis: %w", err)
	}
	dsc := findDSC(pkg)
	if dsc == "" {
		return source{}, fmt.Errorf("build: apt-get source redis left no .dsc in %s", pkg)
	}
	return debianSource(dsc)
}

// FetchDebian puts the distribution's redis source package into cache (the
// build cache, DefaultCache when empty) unless it is there already: what a
// build from "debian" does first, for a host that will build without a route
// to the package registries (a server host in a network namespace).
func FetchDebian(ctx context.Context, cache string) error {
	if cache == "" {
		cache = DefaultCache()
	}
	r := &runner{cache: cache}
	return r.step(filepath.Join(cache, "debian"), "fetch", func() error { _, err := fetchDebian(ctx, r); return err })
}

func debianSource(dsc string) (source, error) {
	// The .dsc pins the hashes of the tarballs it names: its own hash
	// names the source.
	h, err := hashFile(dsc)
	return source{kind: "debian", path: dsc, sha256: h, version: dscVersion(dsc)}, err
}

func findDSC(dir string) string {
	m, _ := filepath.Glob(filepath.Join(dir, "redis_*.dsc"))
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1]
}

// writeDebSrc writes deb-src entries for every deb entry of the system's
// sources (one-line .list and deb822 .sources files) into dir.
func writeDebSrc(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var list, deb822 []string
	files, _ := filepath.Glob(filepath.Join(aptSourceDirs.parts, "*.list"))
	for _, f := range append([]string{aptSourceDirs.list}, files...) {
		b, _ := os.ReadFile(f)
		list = append(list, debSrcList(string(b))...)
	}
	files, _ = filepath.Glob(filepath.Join(aptSourceDirs.parts, "*.sources"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		deb822 = append(deb822, debSrc822(string(b)))
	}
	if len(list) == 0 && len(deb822) == 0 {
		return fmt.Errorf("build: no deb entries in %s or %s to derive deb-src from", aptSourceDirs.list, aptSourceDirs.parts)
	}
	if err := os.WriteFile(filepath.Join(dir, "redline-deb-src.list"), []byte(strings.Join(list, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "redline-deb-src.sources"), []byte(strings.Join(deb822, "\n\n")+"\n"), 0o644)
}

// debSrcList turns "deb URI suite comp" lines into deb-src lines.
func debSrcList(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "deb "); ok {
			out = append(out, "deb-src "+rest)
		}
	}
	return out
}

// debSrc822 turns the "Types: deb" stanzas of a deb822 file into
// "Types: deb-src" ones.
func debSrc822(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == "Types: deb" {
			lines[i] = "Types: deb-src"
		}
	}
	return strings.Join(lines, "\n")
}
