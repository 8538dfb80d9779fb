package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"redline/internal/autotune"
	"redline/internal/secret"
	"redline/internal/testutil"
)

// travelledJournal writes a session directory whose journal names an
// attached server at addr and, as journals before issue 35 did, a
// pass_file.
func travelledJournal(t *testing.T, addr, passFile string) string {
	dir := filepath.Join(t.TempDir(), "session")
	os.Mkdir(dir, 0o700)
	line := fmt.Sprintf(`{"event":"start","options":{"candidates":[{"knob":"redis.hz","values":["50"]}],"alpha":0,"confirm_alpha":0,"seed":7,`+
		`"target":{"workload":"-t set -c 1 --duration 1s","objective":"throughput","addr":%q,"pass_file":%q}}}`+"\n", addr, passFile)
	os.WriteFile(filepath.Join(dir, autotune.JournalFile), []byte(line), 0o600)
	return dir
}

// Issue 35, item 2: a journal travels with its reports, and --resume
// read the pass_file it named (a root file) and sent its first line as
// AUTH to the journal's address; without pass_file, $REDISCLI_AUTH went
// there. A resumed session now takes a password only from the command
// line, for an address the command line names again, or the
// environment's for a listener of root's or the invoking user's.
func TestAutotuneResumeSendsNoPasswordWhereTheJournalSays(t *testing.T) {
	testutil.NeedRoot(t)
	const marker = "ROOT-ONLY-SECRET-35-2"
	const envPW = "root-env-secret-35-2"
	shadow := testutil.SecretFile(t, marker)
	t.Setenv(secret.EnvVar, envPW)
	l := testutil.ListenAs(t, 65534)
	got := recordingListener(l)
	for _, passFile := range []string{shadow, ""} {
		dir := travelledJournal(t, l.Addr().String(), passFile)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, errs, code := runCLI(t, ctx, nil, "autotune", "--resume", dir)
		cancel()
		if s := got(); strings.Contains(s, marker) || strings.Contains(s, envPW) {
			t.Fatalf("pass_file %q: a password reached the journal's address: %q", passFile, s)
		}
		if code != ExitError || !strings.Contains(errs, "--addr "+l.Addr().String()+" again") {
			t.Errorf("pass_file %q: code %d, want a usage error asking for --addr again:\n%s", passFile, code, errs)
		}
	}
}

// The journal's other fields are input too: a knob outside the catalog,
// a Never knob, a server config line naming a file, an ssh host the
// command line does not name again are refused.
func TestAutotuneResumeValidatesTheJournal(t *testing.T) {
	for name, tc := range map[string]struct{ opts, want string }{
		"knob":   {`"candidates":[{"knob":"no.such","values":["1"]}],"seed":7,"target":{"workload":"-t set --duration 1s","objective":"throughput"}`, "not in the catalog"},
		"value":  {`"candidates":[{"knob":"redis.hz","values":["1; rm"]}],"seed":7,"target":{"workload":"-t set --duration 1s","objective":"throughput"}`, "value"},
		"config": {`"candidates":[{"knob":"redis.hz","values":["50"]}],"seed":7,"target":{"workload":"-t set --duration 1s","objective":"throughput","server_config":["loadmodule /tmp/x.so"]}`, "server config"},
		"ssh":    {`"candidates":[{"knob":"redis.hz","values":["50"]}],"seed":7,"target":{"workload":"-t set --duration 1s","objective":"throughput","ssh":"evil.example","ssh_config":"/tmp/cfg"}`, "--ssh evil.example again"},
	} {
		dir := filepath.Join(t.TempDir(), "s")
		os.Mkdir(dir, 0o700)
		os.WriteFile(filepath.Join(dir, autotune.JournalFile), []byte(`{"event":"start","options":{`+tc.opts+"}}\n"), 0o600)
		_, errs, code := runCLI(t, context.Background(), nil, "autotune", "--resume", dir)
		if code != ExitError || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: code %d, want a usage error with %q:\n%s", name, code, tc.want, errs)
		}
	}
}
