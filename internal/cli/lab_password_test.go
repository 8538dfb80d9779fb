package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/change"
	"redline/internal/labdata"
	"redline/internal/secret"
	"redline/internal/testutil"
	"redline/internal/tune"
)

// Issue 24, item 10: a scenario decided where credentials go. Its
// password_file named /etc/shadow (absolute, "..", or a link out of the
// scenario's directory) and root sent the first line as AUTH; and
// $REDISCLI_AUTH went to whatever address the scenario named.
func TestLabPasswordStaysWithTheUser(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "shadow")
	os.WriteFile(outside, []byte("root:$6$hash\n"), 0o600)
	os.Symlink(outside, filepath.Join(dir, "link"))
	os.WriteFile(filepath.Join(dir, "pw"), []byte("mine\n"), 0o600)
	file := filepath.Join(dir, "s.yaml")
	for _, pf := range []string{outside, "../" + filepath.Base(filepath.Dir(outside)) + "/shadow", "link", "/etc/shadow"} {
		sc := labdata.Scenario{Target: labdata.TargetSpec{Kind: "managed", PasswordFile: pf}}
		err := labPassword(&sc, file, "", io.Discard)
		if err == nil || sc.Target.Password != "" {
			t.Errorf("password_file %q: %v, password %q", pf, err, sc.Target.Password)
		} else if !strings.Contains(err.Error(), "below the scenario's directory") {
			t.Errorf("password_file %q: %v does not say what is allowed", pf, err)
		}
	}
	sc := labdata.Scenario{Target: labdata.TargetSpec{Kind: "managed", PasswordFile: "pw"}}
	if err := labPassword(&sc, file, "", io.Discard); err != nil || sc.Target.Password != "mine" {
		t.Errorf("password_file beside the scenario: %q, %v", sc.Target.Password, err)
	}
	sc = labdata.Scenario{Target: labdata.TargetSpec{Kind: "managed", PasswordFile: "/etc/shadow"}}
	if err := labPassword(&sc, file, filepath.Join(dir, "pw"), io.Discard); err != nil || sc.Target.Password != "mine" {
		t.Errorf("--pass-file overrides the scenario's: %q, %v", sc.Target.Password, err)
	}
	t.Setenv(secret.EnvVar, "from-env")
	cases := map[string]string{"10.9.8.7:6379": "", "attacker.example:6379": "", testutil.ListenAs(t, os.Geteuid()).Addr().String(): "from-env"}
	if os.Geteuid() == 0 {
		// Issue 35, item 3: any local user can listen on loopback.
		cases[testutil.ListenAs(t, 65534).Addr().String()] = ""
	}
	for addr, want := range cases {
		sc := labdata.Scenario{Target: labdata.TargetSpec{Kind: "address", Address: addr}}
		if err := labPassword(&sc, file, "", io.Discard); err != nil || sc.Target.Password != want {
			t.Errorf("$REDISCLI_AUTH to %s: %q, %v; want %q", addr, sc.Target.Password, err, want)
		}
	}
}

// Issue 24, item 13: tune printed a server's CONFIG value and a plan's
// why as they were; an ESC sequence in either acted on the terminal.
func TestTunePrintEscapesWhatItDidNotWrite(t *testing.T) {
	var b strings.Builder
	tunePrintOutcome(&b, tune.Outcome{
		Change: change.Change{Kind: change.KindRedisConfig, Target: "hz", Value: "10", Why: "faster\x1b]0;pwned\x07"},
		Status: tune.StatusUnchanged, Now: "10\x1b[2K", Reason: "server said \x1b[31mno",
	})
	if strings.ContainsRune(b.String(), 0x1b) {
		t.Errorf("tune printed an escape:\n%q", b.String())
	}
}
