package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"redline/internal/testutil"
	"strconv"
	"strings"
	"testing"

	"redline/internal/redisserver"
	"redline/internal/redistest"
)

func doctorCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &streams{in: strings.NewReader(""), out: &out, err: &errb})
	return code, out.String(), errb.String()
}

type doctorJSON struct {
	Target struct {
		Redis string `json:"redis"`
		Local bool   `json:"redis_local"`
	} `json:"target"`
	Findings []struct {
		ID       string `json:"id"`
		Status   string `json:"status"`
		Severity string `json:"severity"`
		Evidence []struct{ Source, Value string }
	} `json:"findings"`
}

// A real server started with bad settings: tcp-backlog above somaxconn,
// the latency monitor off, maxclients above its open-files limit. doctor
// must find each, with evidence, and exit 1.
func TestDoctorLiveBadServer(t *testing.T) {
	testutil.HostState(t)
	s := redistest.StartWith(t, redisserver.Options{
		Config: []string{"tcp-backlog 65535", "latency-monitor-threshold 0", "maxclients 10000"},
		Wrap:   [][]string{{"prlimit", "--nofile=256:256", "--"}},
	})
	code, out, errOut := doctorCLI(t, "doctor", "--host", s.Host, "--port", strconv.Itoa(s.Port), "--json")
	if code != ExitFailure {
		t.Fatalf("exit %d, want 1 (findings)\nstderr: %s", code, errOut)
	}
	var rep doctorJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !rep.Target.Local || rep.Target.Redis != s.Addr() {
		t.Errorf("target = %+v, want the local server %s", rep.Target, s.Addr())
	}
	status := map[string]string{}
	for _, f := range rep.Findings {
		status[f.ID] = f.Status
	}
	for _, id := range []string{"somaxconn", "latency-monitor-off", "nofile-maxclients", "startup-warnings"} {
		if status[id] != "fired" {
			t.Errorf("%s: %s, want fired", id, status[id])
		}
	}
	if status["slowlog-off"] != "ok" {
		t.Errorf("slowlog-off: %s, want ok (defaults log slow commands)", status["slowlog-off"])
	}
}

func TestDoctorTextAndExitCodes(t *testing.T) {
	s := redistest.Start(t, "latency-monitor-threshold 0")
	addr := []string{"--host", s.Host, "--port", strconv.Itoa(s.Port)}
	// An INFO finding never fails by default (--fail-on low); brief: the
	// fix, not the undo, which --verbose adds.
	code, out, _ := doctorCLI(t, append([]string{"doctor", "--rule", "latency-monitor-off"}, addr...)...)
	if code != ExitOK || !strings.Contains(out, "CONFIG SET latency-monitor-threshold 10") || strings.Contains(out, "undo:") {
		t.Errorf("exit %d, want 0; output:\n%s", code, out)
	}
	code, out, _ = doctorCLI(t, append([]string{"doctor", "--rule", "latency-monitor-off", "--fail-on", "info", "--verbose"}, addr...)...)
	if code != ExitFailure || !strings.Contains(out, "undo:") {
		t.Errorf("--fail-on info --verbose: exit %d, want 1; output:\n%s", code, out)
	}
	if code, _, errOut := doctorCLI(t, append([]string{"doctor", "--fail-on", "sometimes"}, addr...)...); code != ExitError || !strings.Contains(errOut, "--fail-on") {
		t.Errorf("bad --fail-on: exit %d, %s", code, errOut)
	}
	// An info finding below --min-severity does not fail the run.
	code, out, _ = doctorCLI(t, append([]string{"doctor", "--rule", "latency-monitor-off", "--min-severity", "low"}, addr...)...)
	if code != ExitOK || !strings.Contains(out, "below --min-severity") {
		t.Errorf("exit %d, want 0; output:\n%s", code, out)
	}
	code, out, _ = doctorCLI(t, append([]string{"doctor", "--rule", "latency-monitor-off", "--markdown", "--fail-on", "info"}, addr...)...)
	if code != ExitFailure || !strings.HasPrefix(out, "# redline doctor") || !strings.Contains(out, "```sh") {
		t.Errorf("markdown: exit %d\n%s", code, out)
	}
	if code, _, errOut := doctorCLI(t, "doctor", "--rule", "no-such-rule"); code != ExitError || !strings.Contains(errOut, "no-such-rule") {
		t.Errorf("unknown rule: exit %d, %s", code, errOut)
	}
	if code, _, errOut := doctorCLI(t, "doctor", "--root", "/no/such/dir"); code != ExitError || !strings.Contains(errOut, "/no/such/dir") {
		t.Errorf("bad root: exit %d, %s", code, errOut)
	}
	port, _ := redisserver.FreePort("127.0.0.1")
	if code, _, errOut := doctorCLI(t, "doctor", "--port", strconv.Itoa(port)); code != ExitError || !strings.Contains(errOut, strconv.Itoa(port)) {
		t.Errorf("explicit server down: exit %d, %s", code, errOut)
	}
	if code, out, _ := doctorCLI(t, "doctor", "--list"); code != ExitOK || strings.Count(out, "\n") < 40 {
		t.Errorf("--list: exit %d, %d lines", code, strings.Count(out, "\n"))
	}
}
