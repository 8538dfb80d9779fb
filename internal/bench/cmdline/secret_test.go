package cmdline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"redline/internal/secret"
)

// TestSecretFlagsAreRedacted ties the flag table to the redactor: every
// flag that carries a password (or a URI that may hold one) is hidden by
// secret.Redact in its long, short and --flag=value spellings.
func TestSecretFlagsAreRedacted(t *testing.T) {
	f := New(nil)
	n := 0
	f.fs.VisitAll(func(fl *pflag.Flag) {
		if fl.Name == "pass-file" || !(strings.Contains(fl.Name, "pass") || fl.Name == "uri") {
			return
		}
		n++
		val := "PW"
		if fl.Name == "uri" {
			val = "redis://u:PW@h:1"
		}
		forms := [][]string{{"--" + fl.Name, val}, {"--" + fl.Name + "=" + val}}
		if fl.Shorthand != "" {
			forms = append(forms, []string{"-" + fl.Shorthand, val}, []string{"-" + fl.Shorthand + val})
		}
		for _, argv := range forms {
			if got := strings.Join(secret.Redact(argv), " "); strings.Contains(got, "PW") {
				t.Errorf("--%s: Redact(%q) = %s", fl.Name, argv, got)
			}
		}
	})
	if n < 3 {
		t.Errorf("found %d secret flags (pass, password, uri): did the table change?", n)
	}
}

func TestParseWorkloadErrorsHidePasswords(t *testing.T) {
	for _, line := range []string{"redis-benchmark -a PW -t nosuch", "redis-benchmark -a PW -c x", "redis-benchmark -a 'PW -t get", "redis-benchmark -u redis://u:PW@h -t nosuch"} {
		_, err := ParseWorkload(line)
		if err == nil || strings.Contains(err.Error(), "PW") || !strings.Contains(err.Error(), secret.Marker) {
			t.Errorf("%s: want an error quoting the redacted line, got %v", line, err)
		}
	}
}

func TestPasswordSources(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(file, []byte("fromfile\n"), 0o600)
	cases := []struct {
		args      []string
		env, want string
	}{
		{[]string{"-a", "flag", "--pass-file", file}, "env", "flag"},
		{[]string{"--password", "old"}, "", "old"},
		{[]string{"-u", "redis://u:uri@h", "--pass-file", file}, "env", "uri"},
		{[]string{"--pass-file", file}, "env", "fromfile"},
		{nil, "env", "env"},
		{nil, "", ""},
	}
	for _, c := range cases {
		f := New(nil)
		f.PasswordEnv = c.env
		if _, err := f.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		o, err := f.Options()
		if err != nil || o.Password != c.want {
			t.Errorf("%q env %q: password %q, %v; want %q", c.args, c.env, o.Password, err, c.want)
		}
	}
	f := New(nil)
	f.Parse([]string{"--user", "alice"})
	if _, err := f.Options(); err == nil {
		t.Error("--user without any password was accepted")
	}
}
