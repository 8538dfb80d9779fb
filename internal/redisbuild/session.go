package redisbuild

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"redline/internal/buildspec"
	"redline/internal/trusted"
)

// CompilerDirs are where a session looks up a compiler a client names:
// system directories root owns, never the session's PATH.
var CompilerDirs = []string{"/usr/local/bin", "/usr/bin"}

// CheckSession checks a build spec a session was sent, where the client
// may be anyone the sudoers line lets run `redline session` as root: a
// Makefile and a compiler run as the session's user, so on top of
// Validate (compiler flags only, no shell) the compiler is a name,
// resolved in CompilerDirs, and the source is Debian's source package or
// an absolute path to a tarball or tree that root owns, with every
// directory from / (trusted.Open's rule), so nobody but root
// could have written what runs. It returns the spec with the compiler
// resolved to its path. The same rules hold for a session that is not
// root, except the ownership: it runs with its own user's rights.
func CheckSession(s buildspec.Spec) (buildspec.Spec, error) {
	if err := Validate(s); err != nil {
		return s, err
	}
	cc, err := sessionCompiler(s.CC)
	if err != nil {
		return s, err
	}
	s.CC = cc
	return s, sessionSource(s.Source)
}

// sessionCompiler resolves a compiler name in CompilerDirs.
func sessionCompiler(cc string) (string, error) {
	if cc == "" {
		cc = "gcc"
	}
	if !wordShape.MatchString(cc) {
		return "", fmt.Errorf("build: cc %q: a session takes a compiler by name (gcc, clang, clang-16), found in %s", cc, strings.Join(CompilerDirs, " or "))
	}
	for _, dir := range CompilerDirs {
		p := filepath.Join(dir, cc)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if err := rootOwned(p); err != nil {
			return "", fmt.Errorf("build: cc %s: %w", p, err)
		}
		return p, nil
	}
	return "", SpecError{fmt.Errorf("build: compiler %s not found in %s on this host (install it: apt-get install -y gcc, or clang lld llvm)", cc, strings.Join(CompilerDirs, " or "))}
}

// sessionSource accepts debian, or a tarball or tree root owns.
func sessionSource(src string) error {
	if src == DebianSource {
		return nil
	}
	if !filepath.IsAbs(src) || filepath.Clean(src) != src {
		return fmt.Errorf("build: source %q: a session takes debian, or an absolute path to a tarball or source tree on its host", src)
	}
	st, err := os.Stat(src)
	if err != nil {
		return SpecError{fmt.Errorf("build: source %s: %w", src, err)}
	}
	if !st.IsDir() {
		return rootOwned(src)
	}
	// A tree: the path to its server.c, then every file in it (its
	// Makefiles run).
	if err := rootOwned(filepath.Join(src, "src", "server.c")); err != nil {
		return err
	}
	return walkTree(src, func(rel string, d fs.DirEntry) error {
		info, err := d.Info()
		if err != nil {
			return err
		}
		return rootOnlyInfo(filepath.Join(src, rel), info)
	})
}

// rootOwned applies root's rule (trusted.Open) to p when this process is
// root.
func rootOwned(p string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	f, err := trusted.Open(p)
	if err != nil {
		return fmt.Errorf("build: a root session builds only what root owns: %w", err)
	}
	return f.Close()
}

// rootOnlyInfo is that rule for one entry of a tree whose root passed it
// (trusted.RootOnly).
func rootOnlyInfo(p string, info fs.FileInfo) error {
	if os.Geteuid() != 0 {
		return nil
	}
	if err := trusted.RootOnly(p, info); err != nil {
		return fmt.Errorf("build: a root session builds only what root owns: %w", err)
	}
	return nil
}
