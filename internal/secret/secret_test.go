package secret

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	cases := []struct{ in, want string }{
		{"redline bench -a PW -t get", "redline bench -a REDACTED -t get"},
		{"redline bench -aPW -q", "redline bench -aREDACTED -q"},
		{"redline bench -qa PW", "redline bench -qa REDACTED"},
		{"redline doctor --pass PW --user u", "redline doctor --pass REDACTED --user u"},
		{"redline doctor --pass=PW", "redline doctor --pass=REDACTED"},
		{"redline bench --password PW", "redline bench --password REDACTED"},
		{"redline bench --user alice -a PW", "redline bench --user alice -a REDACTED"},
		{"redline bench -u redis://alice:PW@h:6380/2", "redline bench -u redis://alice:REDACTED@h:6380/2"},
		{"redline bench --uri=rediss://PW@h", "redline bench --uri=rediss://REDACTED@h"},
		{"redline bench -u redis://h:6380", "redline bench -u redis://h:6380"},
		{"redline bench HELLO 3 AUTH alice PW", "redline bench HELLO 3 AUTH REDACTED REDACTED"},
		{"redis-server --requirepass PW --port 1", "redis-server --requirepass REDACTED --port 1"},
		{"redline bench -h h -t set,get -c 32", "redline bench -h h -t set,get -c 32"},
		{"redline lab --pass-file /etc/pw", "redline lab --pass-file /etc/pw"},
		{"redis-server --masteruser PW --tls-key-file-pass PW", "redis-server --masteruser REDACTED --tls-key-file-pass REDACTED"},
	}
	for _, c := range cases {
		got := strings.Join(Redact(strings.Fields(c.in)), " ")
		if got != c.want || strings.Contains(got, "PW") {
			t.Errorf("Redact(%s)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	in := []string{"-a", "PW"}
	Redact(in)
	if !reflect.DeepEqual(in, []string{"-a", "PW"}) {
		t.Errorf("Redact changed its argument: %q", in)
	}
}

func TestRedactLine(t *testing.T) {
	cases := []struct{ in, want string }{
		{`redis-benchmark -t get -q`, `redis-benchmark -t get -q`},
		{`redis-benchmark  -a 'p w' -t get`, `redis-benchmark -a REDACTED -t get`},
		{`requirepass sekret`, `requirepass REDACTED`},
		{`redis-benchmark -a 'unbalanced -t get`, `redis-benchmark -a REDACTED -t get`},
	}
	for _, c := range cases {
		if got := RedactLine(c.in); got != c.want {
			t.Errorf("RedactLine(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pw")
	os.WriteFile(file, []byte("fromfile\r\nsecond line\n"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)
	t.Setenv(EnvVar, "fromenv")
	for _, c := range []struct{ flag, file, want string }{
		{"fromflag", file, "fromflag"}, {"", file, "fromfile"}, {"", "", "fromenv"},
	} {
		if got, err := Resolve(c.flag, c.file, FromEnv()); got != c.want || err != nil {
			t.Errorf("Resolve(%q, %q) = %q, %v; want %q", c.flag, c.file, got, err, c.want)
		}
	}
	if _, err := Resolve("", empty, ""); err == nil {
		t.Error("an empty password file was accepted")
	}
	if _, err := Resolve("", filepath.Join(dir, "missing"), ""); err == nil {
		t.Error("a missing password file was accepted")
	}
}

// Issue 24, item 4: a session never hands back a credential setting's
// value, whichever of the server's settings holds it.
func TestConfigValue(t *testing.T) {
	for _, c := range []struct{ name, value, want string }{
		{"requirepass", "PW", Marker},
		{"MasterAuth", "PW", Marker},
		{"masteruser", "PW", Marker},
		{"tls-key-file-pass", "PW", Marker},
		{"tls-client-key-file-pass", "PW", Marker},
		{"requirepass", "", ""},
		{"user", "alice on >PW #PW ~* &* +@all", "alice on >REDACTED #REDACTED ~* &* +@all"},
		{"user", "default on nopass <PW !PW ~* +@all", "default on nopass <REDACTED !REDACTED ~* +@all"},
		{"sentinel", "auth-pass mymaster PW", "auth-pass mymaster " + Marker},
		{"sentinel", "monitor mymaster 127.0.0.1 6379 2", "monitor mymaster 127.0.0.1 6379 2"},
		{"hz", "10", "10"},
	} {
		if got := ConfigValue(c.name, c.value); got != c.want || (c.value == "PW" && strings.Contains(got, "PW")) {
			t.Errorf("ConfigValue(%s, %s) = %q, want %q", c.name, c.value, got, c.want)
		}
	}
}
