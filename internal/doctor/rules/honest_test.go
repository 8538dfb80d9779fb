package rules

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/doctor"
	"redline/internal/host"
	"redline/internal/testutil"
)

// honestCases are the facts every rule is walked over: the healthy host,
// an empty tree (a capture of nothing), partial trees (only
// /proc/interrupts; only a NIC's sysfs) and every fixture tree.
func honestCases(t *testing.T) map[string]*doctor.Facts {
	t.Helper()
	cases := map[string]*doctor.Facts{"healthy": healthyFacts()}
	// host.NewFS wants proc and sys; nothing else is there.
	cases["empty tree"] = treeFacts(t, testutil.WriteTree(t, map[string]string{"proc/.keep": "", "sys/.keep": ""}))
	onlyIRQs := testutil.WriteTree(t, map[string]string{
		"proc/interrupts": "           CPU0       CPU1\n 30:       5000          0   PCI-MSI 1-edge      eth0-0\n", "sys/.keep": "",
	})
	cases["only /proc/interrupts"] = treeFacts(t, onlyIRQs)
	trees, _ := filepath.Glob("../../../testdata/hosts/*")
	for _, dir := range trees {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			cases[filepath.Base(dir)] = treeFacts(t, dir)
		}
	}
	return cases
}

func treeFacts(t *testing.T, dir string) *doctor.Facts {
	t.Helper()
	fs, err := host.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := host.Read(fs, host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &doctor.Facts{Host: snap, RedisNote: "--root reads a fixture tree, which has no server"}
}

// No rule says ok without the evidence that shows its own claim, on any
// tree: a rule that has nothing to show says not checked and why. Every
// rule that can say ok declares what proves it (Rule.Proves), and Run
// turns an ok without that into not checked, naming the rule: this test
// finds them. Evidence of something else (the allowed CPUs for a
// governor's claim) does not count.
func TestNoOKWithoutEvidence(t *testing.T) {
	registered := rulesByID()
	cases := honestCases(t)
	cases["write-up host"] = writeupFacts()
	for name, f := range cases {
		rep, err := doctor.Run(context.Background(), f, doctor.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range rep.Findings {
			if strings.Contains(fd.Reason, doctor.NoEvidence) {
				t.Errorf("%s: %s: %s", name, fd.ID, fd.Reason)
			}
			if fd.Status == doctor.OK && len(fd.Evidence) == 0 {
				t.Errorf("%s: %s: ok without evidence", name, fd.ID)
			}
			if r := registered[fd.ID]; fd.Status == doctor.OK && len(r.Proves) == 0 {
				t.Errorf("%s: %s: ok, but the rule does not declare what proves it (Rule.Proves)", name, fd.ID)
			} else if want := doctor.MissingProof(r, fd.Evidence); fd.Status == doctor.OK && want != "" {
				t.Errorf("%s: %s: ok without %s", name, fd.ID, want)
			}
			if (fd.Status == doctor.NotChecked || fd.Status == doctor.NotApplicable) && fd.Reason == "" {
				t.Errorf("%s: %s: %s without a reason", name, fd.ID, fd.Status)
			}
			// A tree with nothing in it shows nothing about the kernel:
			// "does not apply here" would be a guess.
			if name == "empty tree" && fd.Status == doctor.NotApplicable {
				t.Errorf("empty tree: %s: not applicable (%s), want not checked", fd.ID, fd.Reason)
			}
		}
	}
}

// cpu-governor's ok rests on the governors of the server's CPUs: with no
// policy covering them, the allowed CPUs alone are no evidence and the
// rule says not checked.
func TestGovernorOKNeedsGovernors(t *testing.T) {
	f := treeFacts(t, "../../../testdata/hosts/x86-2socket-mlx5")
	f.Pid = 40001 // the container on CPUs 20-23
	if fd := runOne(t, f, "cpu-governor"); fd.Status != doctor.Fired {
		t.Fatalf("%s %s%s", fd.Status, fd.Message, fd.Reason)
	}
	var kept []host.FreqPolicy
	for _, p := range f.Host.CPU.Freq {
		if !p.CPUs.Contains(20) && !p.CPUs.Contains(21) && !p.CPUs.Contains(22) && !p.CPUs.Contains(23) {
			kept = append(kept, p)
		}
	}
	f.Host.CPU.Freq = kept
	if fd := runOne(t, f, "cpu-governor"); fd.Status != doctor.NotChecked || !strings.Contains(fd.Reason, "20-23") {
		t.Errorf("no policy of CPUs 20-23: %s %s%s", fd.Status, fd.Message, fd.Reason)
	}
}

// A /proc/interrupts that does not parse is an error in the report, and
// the rules that read it say so rather than judging what is left.
func TestUnparseableInterruptsIsAnError(t *testing.T) {
	dir := testutil.WriteTree(t, map[string]string{"proc/interrupts": "this is not /proc/interrupts\n", "sys/.keep": ""})
	rep, err := doctor.Run(context.Background(), treeFacts(t, dir), doctor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.HasErrors() || len(rep.ReadErrors) == 0 || rep.Summarize().ReadErrors == 0 {
		t.Fatalf("no read error reported: %+v", rep.ReadErrors)
	}
	registered := rulesByID()
	for _, fd := range rep.Findings {
		r := registered[fd.ID]
		if r.Needs&^doctor.NeedHost != 0 {
			continue // no server in a tree: not checked for that first
		}
		if strings.Contains(strings.Join(r.Reads, ","), "interrupts") && fd.Status != doctor.Errored {
			t.Errorf("%s reads interrupts: status %s (%s%s), want error", fd.ID, fd.Status, fd.Message, fd.Reason)
		}
	}
}

// A file the snapshot was refused makes the rules that read it not
// checked, naming the file and the refusal; one that did not parse makes
// them errors.
func TestReadErrorsReachTheRules(t *testing.T) {
	for _, tc := range []struct {
		err  host.SourceError
		want doctor.Status
	}{
		{host.SourceError{Source: "interrupts", Path: "/proc/interrupts", Error: "open /proc/interrupts: permission denied"}, doctor.NotChecked},
		{host.SourceError{Source: "interrupts", Path: "/proc/interrupts", Line: 3, Error: "IRQ 30 has 2 counts for 4 CPU columns"}, doctor.Errored},
	} {
		f := healthyFacts()
		f.Host.Errors = append(f.Host.Errors, tc.err)
		fd := run(t, f, "nic-irq-concentration")
		if fd.Status != tc.want || !strings.Contains(fd.Reason, "/proc/interrupts") {
			t.Errorf("%s: %s (%s), want %s", tc.err.Error, fd.Status, fd.Reason, tc.want)
		}
	}
}
