package ansible_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/testutil"
)

// installCollection installs the collection from this directory into a
// new collections path and returns the path.
func installCollection(t *testing.T) string {
	t.Helper()
	coll := filepath.Join(t.TempDir(), "collections")
	if out, err := exec.Command("ansible-galaxy", "collection", "install", ".", "-p", coll).CombinedOutput(); err != nil {
		t.Fatalf("ansible-galaxy collection install: %v\n%s", err, out)
	}
	return coll
}

func need(t *testing.T, bins ...string) {
	t.Helper()
	testutil.Need(t, bins...)
}

// TestAnsibleLint runs ansible-lint (Debian's package) on the collection,
// with the collection installed so the modules' options are checked.
func TestAnsibleLint(t *testing.T) {
	t.Parallel() // ansible in processes of its own: the three overlap
	testutil.Heavy(t)
	need(t, "ansible-lint", "ansible-galaxy")
	cmd := exec.Command("ansible-lint", "--nocolor")
	cmd.Env = append(os.Environ(), "ANSIBLE_COLLECTIONS_PATH="+installCollection(t), "NO_COLOR=1", "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("ansible-lint: %v\n%s", err, out)
	}
}

// TestModuleDocs parses every module's documentation as ansible-doc does.
func TestModuleDocs(t *testing.T) {
	t.Parallel() // ansible in processes of its own: the three overlap
	testutil.Heavy(t)
	need(t, "ansible-doc", "ansible-galaxy")
	coll := installCollection(t)
	for _, m := range []string{"doctor", "tune"} {
		cmd := exec.Command("ansible-doc", "-t", "module", "redline.redis_host."+m)
		cmd.Env = append(os.Environ(), "ANSIBLE_COLLECTIONS_PATH="+coll, "HOME="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "redline") {
			t.Errorf("ansible-doc %s: %v\n%s", m, err, out)
		}
	}
}

// TestSteerUnitIsTheExample renders the steer role's unit with its
// defaults: apart from comments it is examples/systemd/redline-steer.service,
// so the two cannot drift apart.
func TestSteerUnitIsTheExample(t *testing.T) {
	testutil.Heavy(t)
	need(t, "/usr/bin/python3", "/usr/lib/python3/dist-packages/jinja2/__init__.py", "/usr/lib/python3/dist-packages/yaml/__init__.py")
	script := `import sys, jinja2, yaml
defaults = yaml.safe_load(open("roles/steer/defaults/main.yml"))
env = jinja2.Environment(keep_trailing_newline=True)
env.filters["quote"] = lambda s: s
env.filters["redline.redis_host.systemd_arg"] = lambda s: s
sys.stdout.write(env.from_string(open("roles/steer/templates/redline-steer.service.j2").read()).render(ansible_managed="managed", **defaults))`
	out, err := exec.Command("/usr/bin/python3", "-c", script).CombinedOutput() // Debian's, with the packages' jinja2 and yaml
	if err != nil {
		t.Fatalf("python3 with jinja2 and yaml (ansible-core's dependencies): %v\n%s", err, out)
	}
	example, err := os.ReadFile("../examples/systemd/redline-steer.service")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := uncommented(string(out)), uncommented(string(example)); got != want {
		t.Errorf("the steer role's unit:\n%s\nthe example:\n%s", got, want)
	}
}

func uncommented(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "#") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
