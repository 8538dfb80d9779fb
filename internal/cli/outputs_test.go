package cli

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"redline/internal/testutil/respscript"
)

// TestOutputsCheckedBeforeAnyWork (issue 40): bench -o afile/x.json
// measured for the whole run and then exited 1; report -o and inspect
// --capture gave 1, doctor -o and profile -o 2, each in its own words.
// Every output is checked first: exit 2, one message form, no work done.
func TestOutputsCheckedBeforeAnyWork(t *testing.T) {
	srv := respscript.Start(t, respscript.Options{})
	p := strconv.Itoa(srv.Port())
	dir := t.TempDir()
	afile := filepath.Join(dir, "afile")
	os.WriteFile(afile, nil, 0o644)
	results := filepath.Join(dir, "r.json")
	os.WriteFile(results, []byte(`{"schema":1}`), 0o644)
	bad := filepath.Join(afile, "x")
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"bench", "-p", p, "-t", "set", "-n", "1000", "-o", bad}, "-o"},
		{[]string{"bench", "-p", p, "-t", "set", "-n", "1000", "-o", "/proc/nope/x.json"}, "-o"},
		{[]string{"bench", "-p", p, "-t", "set", "-n", "1000", "--hdr-out", bad}, "--hdr-out"},
		{[]string{"bench", "-p", p, "-t", "set", "-n", "1000", "-o", dir}, "-o"},
		{[]string{"doctor", "-p", p, "-o", bad}, "-o"},
		{[]string{"report", results, "-o", bad + ".md"}, "-o"},
		{[]string{"inspect", "--capture", bad}, "--capture"},
		{[]string{"inspect", "--capture", dir}, "--capture"}, // not empty
		{[]string{"profile", "-p", p, "--duration", "1s", "-o", bad}, "-o"},
		{[]string{"tune", "plan", "--doctor", "-o", bad + ".yaml"}, "-o"},
		{[]string{"lab", "-o", bad}, "-o"},
	} {
		t.Run(strings.Join(tc.args[:1], " ")+" "+tc.flag, func(t *testing.T) {
			_, errOut, code := runCLI(t, context.Background(), nil, tc.args...)
			want := "redline " + tc.args[0]
			if tc.args[0] == "tune" {
				want += " plan"
			}
			want += ": cannot write " + tc.flag + " "
			if code != ExitError || !strings.HasPrefix(errOut, want) {
				t.Errorf("%v: exit %d, stderr %q; want 2 and %q...", tc.args, code, errOut, want)
			}
		})
	}
	for _, cmd := range []string{"SET", "INFO", "CONFIG", "PING"} {
		if n := srv.Count(cmd); n > 0 {
			t.Errorf("the server saw %d %s: work was done before the outputs were checked", n, cmd)
		}
	}
}

// TestBenchReportPrintedWhenTheSaveFails (issue 40): the save came
// before the report, so an -o that failed late (its directory removed
// during the run) lost the figures on the terminal too.
func TestBenchReportPrintedWhenTheSaveFails(t *testing.T) {
	srv := respscript.Start(t, respscript.Options{})
	dir := filepath.Join(t.TempDir(), "gone")
	os.Mkdir(dir, 0o755)
	go func() {
		<-srv.Seen("SET", 1000)
		os.RemoveAll(dir)
	}()
	out, errOut, code := runCLI(t, context.Background(), nil, "bench", "-p", strconv.Itoa(srv.Port()), "-t", "set", "-c", "2", "-n", "200000", "--progress", "none", "-o", filepath.Join(dir, "r.json"))
	if code != ExitFailure || !strings.Contains(out, "====== SET ======") || !strings.Contains(errOut, "the results were not saved") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
}

// TestBenchRequestsEndADurationRunWithAWord (issue 40): --duration 1s
// -n 1000 stopped after 1000 requests without a word. The rule: with
// both, a test ends at whichever comes first, and -n ending it is said.
func TestBenchRequestsEndADurationRunWithAWord(t *testing.T) {
	srv := respscript.Start(t, respscript.Options{})
	_, errOut, code := runCLI(t, context.Background(), nil, "bench", "-p", strconv.Itoa(srv.Port()), "-t", "set", "--duration", "1h", "-n", "1000", "-q")
	if code != 0 || !strings.Contains(errOut, "SET: -n 1000 ended the test after") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
