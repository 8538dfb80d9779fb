package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"redline/internal/change"
	"redline/internal/host"
	"redline/internal/textsafe"
	"redline/internal/tune"
)

// tuneStatusWord is how each status reads in the left column.
var tuneStatusWord = map[tune.Status]string{
	tune.StatusPlanned: "change", tune.StatusUnchanged: "in place", tune.StatusRefused: "refused",
	tune.StatusIntended: "intended", tune.StatusApplied: "applied", tune.StatusFailed: "FAILED",
	tune.StatusRestored: "restored", tune.StatusDrift: "drift", tune.StatusGone: "gone",
	tune.StatusRestoreFailed: "NOT RESTORED", tune.StatusOK: "ok", tune.StatusMismatch: "MISMATCH",
	tune.StatusUnknown: "unknown",
}

// target names a change for people: the file path for files and sysctls.
func tuneTarget(c change.Change) string {
	switch c.Kind {
	case change.KindSysctl:
		return "sysctl " + c.Target + " (" + host.SysctlPath(c.Target) + ")"
	case change.KindFile:
		return c.Target
	case change.KindAffinity:
		return "affinity of pid " + c.Target + " (every thread)"
	case change.KindChannels:
		return "channels of " + c.Target
	}
	return c.Key() // a redis-config change names its node: "redis-config hz on 127.0.0.1:7001"
}

func tunePrintOutcome(w io.Writer, o tune.Outcome) {
	c := o.Change
	line := fmt.Sprintf("%-12s %s", tuneStatusWord[o.Status], tuneTarget(c))
	switch o.Status {
	case tune.StatusUnchanged, tune.StatusOK:
		line += ": " + c.Show(tuneOrStr(o.Now, o.Old))
	case tune.StatusRestored:
		// every listing reads old -> new; the word says where it is now
		line += ": " + c.Show(o.Old) + " -> " + c.Show(tuneOrStr(o.New, c.Value)) + ", back to " + c.Show(o.Old)
	case tune.StatusGone:
		line += ": " + c.Show(o.Old) + " -> " + c.Show(tuneOrStr(o.New, c.Value)) + ", undone"
	case tune.StatusMismatch:
		line += ": " + c.Show(o.Now) + ", want " + c.Show(c.Value)
	case tune.StatusDrift:
		line += ": " + c.Show(o.Old) + " -> " + c.Show(tuneOrStr(o.New, c.Value)) + ", now " + c.Show(o.Now)
	case tune.StatusRefused:
		line += ": want " + c.Show(c.Value)
	default:
		line += ": " + c.Show(o.Old) + " -> " + c.Show(tuneOrStr(o.New, c.Value))
	}
	// Live values come from a server or the kernel, why and rule from a
	// plan someone wrote: none may act on the terminal.
	fmt.Fprintln(w, textsafe.Printable(line))
	if c.Why != "" || c.Rule != "" {
		fmt.Fprintf(w, "%-12s why: %s%s\n", "", textsafe.Printable(c.Why), textsafe.Printable(tuneRuleSuffix(c.Rule)))
	}
	if o.Reason != "" {
		fmt.Fprintf(w, "%-12s %s\n", "", textsafe.Printable(o.Reason))
	}
}

func tuneRuleSuffix(rule string) string {
	if rule == "" {
		return ""
	}
	return " [" + rule + "]"
}

func tuneOrStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func tunePrintPreview(w io.Writer, p *tune.Plan, outs []tune.Outcome, warnings []string) {
	counts := map[tune.Status]int{}
	for _, o := range outs {
		counts[o.Status]++
		tunePrintOutcome(w, o)
	}
	if p.Redis != nil {
		fmt.Fprintf(w, "redis-config changes go to %s%s\n", p.Redis.Addr, map[bool]string{true: " (persisted with CONFIG REWRITE)"}[p.Redis.Rewrite])
	}
	for _, n := range p.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	for _, n := range warnings {
		fmt.Fprintln(w, "WARNING:", n)
	}
	fmt.Fprintf(w, "\n%d changes: %d to make, %d already in place, %d refused here\n",
		len(outs), counts[tune.StatusPlanned], counts[tune.StatusUnchanged], counts[tune.StatusRefused])
}

func tunePrintStatus(w io.Writer, rep *tune.StatusReport, stateDir string) {
	if len(rep.Sessions) == 0 {
		fmt.Fprintf(w, "nothing applied (journal %s)\n", stateDir)
	}
	tunePrintLeft(w, rep.Left)
	if len(rep.Sessions) == 0 {
		return
	}
	for _, s := range rep.Sessions {
		fmt.Fprintf(w, "apply %s at %s on %s, root %s: %s\n", s.ID, s.Started, tuneOrStr(s.Info.Hostname, "?"), s.Info.Root, tuneSessionEnd(s))
		if s.Rebooted {
			fmt.Fprintln(w, "  the machine rebooted since: values that do not survive a reboot are gone")
		}
		for _, c := range s.Changes {
			tunePrintOutcome(w, c.Outcome)
			fmt.Fprintf(w, "%-12s lost on: %s\n", "", c.LostOn)
		}
	}
	unread, changed := 0, 0
	for _, s := range rep.Sessions {
		for _, c := range s.Changes {
			switch c.Status {
			case tune.StatusApplied:
			case tune.StatusUnknown:
				unread++
			default:
				changed++
			}
		}
	}
	if unread > 0 {
		fmt.Fprintf(w, "\n%d value(s) could not be read now (cannot read is not changed: see why under each)\n", unread)
	}
	if changed > 0 {
		fmt.Fprintln(w, "\nsome values are no longer what redline set; rollback restores only those still ours")
	}
}

// tunePrintLeft says which values a rollback left alone, and why: someone
// else changed them after redline did, so they are neither redline's nor
// what was there before.
func tunePrintLeft(w io.Writer, left []tune.LeftEntry) {
	if len(left) == 0 {
		return
	}
	fmt.Fprintf(w, "a rollback left %d value(s) alone, changed by someone else after redline set them (restore them by hand if the old value is wanted):\n", len(left))
	for _, e := range left {
		c := e.Change
		now := "now " + c.Show(e.Now)
		switch {
		case e.NowError != "":
			now = "cannot read it now: " + e.NowError
		case c.Same(e.Now, e.Old):
			now += " (the value before the apply again)"
		}
		line := fmt.Sprintf("  %s: %s -> %s by redline; %s", c.Key(), c.Show(e.Old), c.Show(tuneOrStr(e.Applied, c.Value)), now)
		fmt.Fprintln(w, textsafe.Printable(line))
	}
}

func tuneSessionEnd(s tune.SessionStatus) string {
	switch s.End {
	case "commit":
		return "complete"
	case "abort":
		return "failed and rolled back (some values could not be restored)"
	}
	return "INTERRUPTED (redline stopped mid-apply): run redline tune rollback"
}

func tuneWriteJSON(w io.Writer, v any) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	if err := e.Encode(v); err != nil {
		return errors.Join(errors.New("write JSON"), err)
	}
	return nil
}
