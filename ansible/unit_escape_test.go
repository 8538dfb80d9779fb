package ansible_test

import (
	"os/exec"
	"strings"
	"testing"
)

// Issue 35, item 5: the unit templates quoted inventory arguments for a
// shell, and a newline in one added a line of its own to the unit
// (ExecStartPost=, run as root). Each argument is one ExecStart= word,
// escaped for systemd (plugins/filter/systemd.py), and the roles refuse a
// control character in their variables before rendering.
func TestUnitArgsEscapedForSystemd(t *testing.T) {
	need(t, "python3")
	script := `import sys, json, jinja2, yaml
sys.path.insert(0, "plugins/filter")
import systemd
env = jinja2.Environment(keep_trailing_newline=True)
env.filters["quote"] = lambda s: s
env.filters["redline.redis_host.systemd_arg"] = systemd.systemd_arg
evil = ["--dry-run\nExecStartPost=/bin/sh -c 'id > /tmp/pwned'", "100%", "$HOME", 'a"b\\c']
for role, tmpl, var in [("steer", "redline-steer.service.j2", "redline_steer_args"),
                        ("doctor_textfile", "redline-doctor-textfile.service.j2", "redline_doctor_args")]:
    d = yaml.safe_load(open("roles/%s/defaults/main.yml" % role))
    d[var] = evil
    sys.stdout.write(env.from_string(open("roles/%s/templates/%s" % (role, tmpl)).read()).render(ansible_managed="managed", **d))
`
	out, err := exec.Command("python3", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("render: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "ExecStartPost") {
			t.Errorf("an argument added a line to the unit: %s", l)
		}
		if strings.HasPrefix(l, "ExecStart=") && !strings.Contains(l, `"--dry-run\nExecStartPost=/bin/sh -c 'id > /tmp/pwned'" "100%%" "$$HOME" "a\"b\\c"`) {
			t.Errorf("not escaped for systemd: %s", l)
		}
	}
}
