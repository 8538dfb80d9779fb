package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// needs is the one declaration of what the tests take from the machine
// rather than from the repo: each program a test runs (found on PATH) or
// file it reads or links (an absolute path: a library, a keyring), and the
// Debian package that provides it. make test-deps installs every one of
// these packages (TEST_PKGS in the Makefile), and TestNeedsInstalledByTestDeps
// (make check-needs) checks both halves: each package is in that list, and
// its file list (dpkg -L) holds the program or file. Need consults it: a
// test that needs something undeclared fails, so the list cannot fall
// behind the tests.
//
// Go itself is a prerequisite (the README's), not a package here.
var needs = map[string]string{
	// The server and the load tool; redis-server is test-deps' link to
	// redis-tools' redis-check-rdb (providedAs).
	"redis-server":    "redis-tools",
	"redis-check-rdb": "redis-tools",
	"redis-benchmark": "redis-tools",
	"redis-cli":       "redis-tools",

	// Namespaces, NICs, CPUs and users.
	"ip":         "iproute2",
	"ethtool":    "ethtool", // the lab's steer variant and steer's live tests set offloads in namespaces
	"numactl":    "numactl",
	"taskset":    "util-linux",
	"unshare":    "util-linux",
	"setpriv":    "util-linux",
	"pgrep":      "procps",
	"sysctl":     "procps",
	"perf":       "linux-perf",
	"irqbalance": "irqbalance", // steer's ban test starts its own; the package's service kept from starting

	// The server variants' allocators (redisserver.allocators).
	"/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4": "libtcmalloc-minimal4",
	"/usr/lib/x86_64-linux-gnu/libmimalloc.so.2":         "libmimalloc2.0",

	// redline build (internal/redisbuild): Debian's redis source (apt-get
	// source with deb-src entries derived from the system's deb entries,
	// signed by Debian's keyring; dpkg-source unpacks .tar.xz and applies
	// Debian's patches), built with gcc and clang (thin LTO with lld, PGO
	// with llvm-profdata), BOLT after gcc's PGO, linking the system
	// jemalloc as Debian does. gcc and libc6-dev also build the race
	// detector's cgo (go test -race).
	"apt-get":              "apt",
	"dpkg-source":          "dpkg-dev",
	"xz":                   "xz-utils",
	"make":                 "make",
	"gcc":                  "gcc",
	"/usr/include/stdio.h": "libc6-dev",
	"clang":                "clang",
	"ld.lld":               "lld",
	"llvm-profdata":        "llvm",
	// clang's PGO links its profile runtime, a package of its own.
	"/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.profile-x86_64.a": "libclang-rt-14-dev",
	"llvm-bolt-16": "bolt-16",
	"/usr/lib/x86_64-linux-gnu/libjemalloc.so":       "libjemalloc-dev",
	"/usr/share/keyrings/debian-archive-keyring.gpg": "debian-archive-keyring",

	// --ssh: sshd in a namespace, ssh and ssh-keygen.
	"/usr/sbin/sshd": "openssh-server",
	"ssh":            "openssh-client",
	"ssh-keygen":     "openssh-client",

	// Reports: screenshots, Markdown as a GFM viewer renders it,
	// Prometheus' textfile and alert rules.
	"chromium":  "chromium",
	"cmark-gfm": "cmark-gfm",
	"promtool":  "prometheus",
	// The man pages (redline man DIR) formatted as man(1) does, warnings on.
	"groff": "groff-base",

	// The Ansible collection (ansible/): run against sshd hosts, linted,
	// its templates rendered by Debian's python3 with jinja2 and yaml.
	"ansible-playbook": "ansible-core",
	"ansible-galaxy":   "ansible-core",
	"ansible-doc":      "ansible-core",
	"ansible-lint":     "ansible-lint",
	"python3":          "python3-minimal",
	"/usr/bin/python3": "python3-minimal",
	"/usr/lib/python3/dist-packages/jinja2/__init__.py": "python3-jinja2",
	"/usr/lib/python3/dist-packages/yaml/__init__.py":   "python3-yaml",

	// make test-arm64 and .ci/run: arm64 test binaries under qemu-user, the
	// static-binary check; scripts/fresh-check's Debian root.
	"qemu-aarch64-static": "qemu-user-static",
	"file":                "file",
	"mmdebstrap":          "mmdebstrap",
}

// providedAs names, for a need its package provides under another name,
// that name: make test-deps links redis-server to redis-tools' binary, as
// Debian's redis-server package does, without that package's service.
var providedAs = map[string]string{"redis-server": "redis-check-rdb"}

// NeedPackage is the Debian package that provides need, "" when need is
// not declared.
func NeedPackage(need string) string { return needs[need] }

// DeclaredNeeds lists every declared need, sorted.
func DeclaredNeeds() []string {
	out := make([]string, 0, len(needs))
	for n := range needs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Need skips t unless every need is present: a program on PATH, or a file
// (an absolute path). Each must be declared in needs (a test that needs
// something undeclared fails, wherever it runs). In CI (CI=true), where
// make test-deps has installed every declared package, a missing need fails
// t, naming the package, instead of skipping it. Unlike NeedTools, Need
// does not skip under -short.
func Need(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		pkg, ok := needs[n]
		if !ok {
			t.Fatalf("testutil: %q is not declared in internal/testutil/needs.go: add it with the Debian package that provides it, and that package to the Makefile's TEST_PKGS", n)
		}
		if present(n) {
			continue
		}
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s missing: Debian package %s, which make test-deps installs", n, pkg)
		}
		t.Skipf("%s missing (Debian package %s: make test-deps installs it)", n, pkg)
	}
}

// NeedPath is Need for one program, and its path on PATH (or the file's
// own path).
func NeedPath(t testing.TB, name string) string {
	t.Helper()
	Need(t, name)
	if filepath.IsAbs(name) {
		return name
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatal(err) // present a moment ago
	}
	return p
}

func present(need string) bool {
	if filepath.IsAbs(need) {
		_, err := os.Stat(need)
		return err == nil
	}
	_, err := exec.LookPath(need)
	return err == nil
}

// providedBy reports whether a package's file list (dpkg -L) holds need: a
// program in one of the system's bin directories (with /usr merged or not:
// Debian 12 packages still list /bin/ip), or the file itself.
func providedBy(need string, files []string) bool {
	if as, ok := providedAs[need]; ok {
		need = as
	}
	for _, f := range files {
		if filepath.IsAbs(need) {
			if f == need || "/usr"+f == need || f == "/usr"+need {
				return true
			}
			continue
		}
		if filepath.Base(f) != need {
			continue
		}
		switch strings.TrimPrefix(filepath.Dir(f), "/usr") {
		case "/bin", "/sbin":
			return true
		}
	}
	return false
}

// Has reports whether need (declared in needs) is present, for a test
// that does less without it rather than skipping; in CI a missing need
// fails t, naming the package.
func Has(t testing.TB, need string) bool {
	t.Helper()
	pkg, ok := needs[need]
	if !ok {
		t.Fatalf("testutil: %q is not declared in internal/testutil/needs.go", need)
	}
	if present(need) {
		return true
	}
	if os.Getenv("CI") == "true" {
		t.Errorf("%s missing: Debian package %s, which make test-deps installs", need, pkg)
	}
	return false
}
