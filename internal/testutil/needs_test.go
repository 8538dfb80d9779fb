package testutil

import (
	"bufio"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNeedsInstalledByTestDeps checks the declaration of the tests' needs
// against the repo's install step: every declared package is in the
// Makefile's TEST_PKGS (so make test-deps installs it on a fresh machine,
// whether or not this one has it), and every installed one's file list
// (dpkg -L) holds the program or file declared from it. A package not
// installed here is reported; under CI=true (and make check-needs, which
// runs after make test-deps) that is a failure.
func TestNeedsInstalledByTestDeps(t *testing.T) {
	pkgs := makeVar(t, "../../Makefile", "TEST_PKGS")
	listed := map[string]bool{}
	for _, p := range pkgs {
		listed[p] = true
	}
	if _, err := exec.LookPath("dpkg-query"); err != nil && os.Getenv("CI") != "true" {
		t.Skip("no dpkg-query: not a Debian machine")
	}
	files := map[string][]string{} // installed package -> its file list
	var notInstalled []string
	for _, n := range DeclaredNeeds() {
		pkg := needs[n]
		if !listed[pkg] {
			t.Errorf("%s: package %s is not in the Makefile's TEST_PKGS: make test-deps would not install it", n, pkg)
			continue
		}
		list, ok := files[pkg]
		if !ok {
			list = dpkgFiles(pkg)
			files[pkg] = list
			if list == nil {
				notInstalled = append(notInstalled, pkg)
			}
		}
		if list != nil && !providedBy(n, list) {
			t.Errorf("%s: package %s is installed but its file list (dpkg -L %s) does not hold it", n, pkg, pkg)
		}
	}
	if len(notInstalled) > 0 {
		msg := "not installed here, so their file lists are not checked (make test-deps installs them): " + strings.Join(notInstalled, " ")
		if os.Getenv("CI") == "true" {
			t.Error(msg)
		} else {
			t.Log(msg)
		}
	}
}

// TestNeedsCalledAreDeclared reads the tree's calls of Need, NeedPath,
// NeedTools and Has: every name they pass as a literal is declared, also
// where this machine would skip the test before its call (no root, -short).
func TestNeedsCalledAreDeclared(t *testing.T) {
	call := regexp.MustCompile(`\b(?:testutil\.)?(?:Need|NeedPath|NeedTools|Has)\((?:t|b|tb), ([^)]*)\)`)
	lit := regexp.MustCompile(`"([^"]+)"`)
	n := 0
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range call.FindAllStringSubmatch(string(b), -1) {
			for _, l := range lit.FindAllStringSubmatch(m[1], -1) {
				n++
				if NeedPackage(l[1]) == "" {
					t.Errorf("%s: %q is not declared in needs.go", p, l[1])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 20 {
		t.Errorf("found %d needs in the tree's calls: the pattern no longer matches them", n)
	}
}

// TestNeedsProvidedBy checks the file-list match on Debian 12's shapes.
func TestNeedsProvidedBy(t *testing.T) {
	for _, c := range []struct {
		need  string
		files []string
		want  bool
	}{
		{"ip", []string{"/bin", "/bin/ip", "/sbin/ip"}, true},             // iproute2, /usr not merged in its list
		{"ethtool", []string{"/usr/sbin/ethtool"}, true},                  //
		{"gcc", []string{"/usr/bin/gcc-ar", "/usr/share/doc/gcc"}, false}, // a document is no program
		{"gcc", []string{"/usr/lib/gcc"}, false},                          // nor a directory elsewhere
		{"redis-server", []string{"/usr/bin/redis-check-rdb"}, true},      // test-deps' link
		{"/usr/lib/x86_64-linux-gnu/libjemalloc.so", []string{"/usr/lib/x86_64-linux-gnu/libjemalloc.so"}, true},
		{"/usr/bin/python3", []string{"/usr/bin/python3.11"}, false},
	} {
		if got := providedBy(c.need, c.files); got != c.want {
			t.Errorf("providedBy(%q, %q) = %v, want %v", c.need, c.files, got, c.want)
		}
	}
}

// dpkgFiles is an installed package's file list, nil when it is not
// installed.
func dpkgFiles(pkg string) []string {
	status, err := exec.Command("dpkg-query", "-W", "-f", "${db:Status-Status}", pkg).Output()
	if err != nil || string(status) != "installed" {
		return nil
	}
	out, err := exec.Command("dpkg-query", "-L", pkg).Output()
	if err != nil {
		return nil
	}
	return strings.Fields(string(out))
}

var makeAssign = regexp.MustCompile(`^([A-Z0-9_]+)\s*[:?]?=\s*(.*)$`)
var makeRef = regexp.MustCompile(`\$\(([A-Z0-9_]+)\)`)

// makeVar reads a list variable of the Makefile (plain assignments,
// backslash continuations, $(VAR) of variables assigned before it).
func makeVar(t *testing.T, path, name string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vars := map[string]string{}
	sc := bufio.NewScanner(f)
	var line string
	for sc.Scan() {
		line += sc.Text()
		if strings.HasSuffix(line, "\\") {
			line = strings.TrimSuffix(line, "\\") + " "
			continue
		}
		if m := makeAssign.FindStringSubmatch(line); m != nil {
			vars[m[1]] = makeRef.ReplaceAllStringFunc(m[2], func(r string) string { return vars[makeRef.FindStringSubmatch(r)[1]] })
		}
		line = ""
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	v, ok := vars[name]
	if !ok {
		t.Fatalf("%s assigns no %s", path, name)
	}
	return strings.Fields(v)
}
