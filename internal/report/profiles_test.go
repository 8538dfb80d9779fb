package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/labdata"
	"redline/internal/testutil"
	"redline/internal/textsafe"
)

// The profile fixture is a real lab run (testdata/input/lab-profile/SOURCE).
const profileFixture = "lab-profile/result.json"

func profileReport(t *testing.T) *Report {
	t.Helper()
	return FromResult(mustLoad(t, profileFixture).Result, filepath.Join("testdata", "input", profileFixture))
}

// The golden holds the two sections this fixture is for, so a change in
// the rest of the report does not rewrite it.
func TestProfileReportMarkdownGolden(t *testing.T) {
	var b bytes.Buffer
	mw := textsafe.NewWriter(&b)
	res := profileReport(t).Lab
	writeServerTimeMD(mw, res)
	writeProfilesMD(mw, res)
	if mw.Err() != nil {
		t.Fatal(mw.Err())
	}
	testutil.Golden(t, filepath.Join("testdata", "golden", "lab-profile-sections.md"), b.Bytes())
}

func TestProfileReportSections(t *testing.T) {
	needOpenat2(t)
	md := string(render(t, profileReport(t), Markdown))
	for _, want := range []string{
		"## Where the server's time went",
		"| split-cpus | 3 | 11% of a CPU | 11% of a CPU: running 11%, waiting for a CPU 58%, asleep 31%",
		"## CPU profiles",
		"**baseline**, run #4 (repetition 2): 1,238 samples",
		"The main thread left its CPU 18,715 times while it could still run (to redline 100%, cli.test <1%",
		"The main thread left its CPU 159 times while it could still run (to redline 45%, gofmt 10%",
		"Moved most against the baseline's run #4: differential flame graph [profiles/split-cpus-set/diff.svg](./profiles/split-cpus-set/diff.svg)",
		"| `pvm_irq_enable` | kernel | 36.5 | 23.1 | -13.4 |",
		"NIC queue IRQs: the load reaches the server over loopback, which raises no NIC interrupt",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	// The server section sits between the verdicts and the host.
	if i, j, k := strings.Index(md, "## Summary"), strings.Index(md, "## Where the server's time went"), strings.Index(md, "## Host"); !(i < j && j < k) {
		t.Errorf("sections out of order: summary %d, server time %d, host %d", i, j, k)
	}
	html := string(render(t, profileReport(t), HTML))
	for _, want := range []string{
		`<section id="server-time">`, `<section id="profiles">`, `<a href="#profiles">Profiles</a>`,
		`<iframe class="flame" sandbox="" title="differential flame graph of split-cpus"`,
		`<iframe class="flame" sandbox="" title="flame graph of split-cpus"`,
		"srcdoc=\"&lt;svg",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	// Well-formed, and the embedded graphs are documents of their own
	// (srcdoc), not elements of the page.
	page := parsePage(t, []byte(html))
	if page.count["iframe"] != 2 || page.ids["server-time"] != true || page.ids["profiles"] != true {
		t.Errorf("%d iframes, ids %v", page.count["iframe"], page.ids)
	}
	// The baseline's flame.svg is not in the fixture: not embedded, and
	// nothing outside the file is referenced.
	if strings.Contains(html, `title="flame graph of baseline"`) || strings.Contains(html, `src="profiles/`) {
		t.Error("HTML embeds a missing file or links outside itself")
	}
}

func TestProfileReportWithoutProfiles(t *testing.T) {
	res := &labdata.Result{Sampling: &labdata.Sampling{Profile: true, ProfileRep: 4, Breakdown: "not sampled: the server runs elsewhere"}}
	notes := strings.Join(append(samplingNotes(res), profileNote(res)), "\n")
	for _, want := range []string{"Server time: not sampled: the server runs elsewhere.", "No CPU profile: the lab stopped before repetition 4"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	res.Runs = []labdata.Run{{Seq: 1, Variant: "b", Workload: "w", Rep: 4, Profile: &labdata.RunProfile{Error: "not profiled: perf not found"}}}
	pv := profileViews(res)
	if len(pv) != 1 || pv[0].headline() != "run #1 (repetition 4): not profiled: perf not found" || profileNote(res) != "" {
		t.Errorf("profile with an error: %+v", pv)
	}
}

func TestInlineSVGRefusesActiveContent(t *testing.T) {
	needOpenat2(t)
	dir := t.TempDir()
	for name, body := range map[string]string{
		"script.svg": `<svg><script>alert(1)</script></svg>`,
		"onload.svg": `<svg onload="x()"></svg>`,
		"link.svg":   `<svg><a href="http://x">y</a></svg>`,
		"ok.svg":     `<?xml version="1.0"?>` + "\n" + `<svg height="10"><title>a</title></svg>`,
	} {
		writeFile(t, filepath.Join(dir, name), body)
	}
	for _, bad := range []string{"script.svg", "onload.svg", "link.svg", "missing.svg"} {
		if s := inlineSVG(dir, bad); s != "" {
			t.Errorf("%s embedded: %q", bad, s)
		}
	}
	if s := embedSVG(dir, "ok.svg"); !strings.HasPrefix(s.Doc, "<svg") || s.Height != 30 {
		t.Errorf("ok.svg: %+v", s)
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
