package cli

// --resume DIR continues a session from its journal, and a journal is a
// file that travels (it goes with its reports): every field of it is
// input someone else may have written. What it names is held to the rules
// of the command line's flags (finish runs them all again), and further:
// its server's redis.conf lines to a scenario's (redisparam.CheckLine);
// its knobs to the catalog, the safety classes and the values the catalog
// tries; what would act with the invoking user's credentials (the ssh
// host and config, the attached server's address for a password) only
// when the command line names it again. Where a password comes from is
// never journaled.

import (
	"fmt"
	"slices"
	"strconv"

	"redline/internal/autotune"
	"redline/internal/knobs"
	"redline/internal/redisparam"
	"redline/internal/target"
	"redline/internal/textsafe"
)

// confirmJournal checks the journal's target (o.target, eo) against the
// command line's (given, givenRemote) and takes from the command line
// what only it may give: the password file.
func (o *autotuneOptions) confirmJournal(eo autotune.Options, given target.Spec, givenRemote remoteOptions) error {
	t := &o.target
	q := textsafe.Printable
	switch {
	case t.SSH != "" && givenRemote.target != t.SSH:
		return fmt.Errorf("the session ran on --ssh %s: give --ssh %s again to resume it (a journal is a file: redline opens no ssh link on its word)", q(t.SSH), q(t.SSH))
	case t.SSHConfig != "" && givenRemote.config != t.SSHConfig:
		return fmt.Errorf("the session used --ssh-config %s: give it again to resume", q(t.SSHConfig))
	case given.Addr != "" && given.Addr != t.Addr, given.Socket != "" && given.Socket != t.Socket:
		return fmt.Errorf("--addr/--socket %s is not the journal's server %s", q(given.Addr+given.Socket), q(t.Addr+t.Socket))
	}
	t.PassFile = given.PassFile
	o.addrConfirmed = t.Attached() && (given.Addr != "" || given.Socket != "")
	for _, line := range t.ServerConfig {
		if err := redisparam.CheckLine(line); err != nil {
			return fmt.Errorf("the journal's server config %q: %v", q(line), err)
		}
	}
	return checkJournalCandidates(eo.Candidates, *t)
}

// checkJournalCandidates holds the journal's candidates to the catalog:
// known knobs the target allows, the catalog's values (server.build's:
// the journal's own build names).
func checkJournalCandidates(cands []autotune.Candidate, t target.Spec) error {
	for _, c := range cands {
		k, ok := knobs.Lookup(c.Knob)
		if !ok || !k.Allowed(t.Allow) {
			return fmt.Errorf("the journal's knob %q: not in the catalog, or not allowed (--allow)", textsafe.Printable(c.Knob))
		}
		for _, v := range c.Values {
			if !journalValueOK(k, v, t) {
				return fmt.Errorf("the journal's knob %s: value %q is neither one the catalog tries nor a valid change", k.Name, textsafe.Printable(v))
			}
		}
	}
	return nil
}

// journalValueOK: one of the catalog's values, a build the journal names
// (server.build), or a value the doctor put first that passes the
// change's own allow-list or a scenario's config-line rule.
func journalValueOK(k knobs.Knob, v string, t target.Spec) bool {
	switch {
	case k.SessionValues():
		return slices.ContainsFunc(t.Builds, func(b target.Build) bool { return b.Name == v })
	case slices.Contains(k.Values, v):
		return true
	case k.Numeric:
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return false
		}
	}
	if ch, ok := k.Change(v); ok {
		return ch.Validate() == nil
	}
	if st, ok := k.Start(v); ok && st.ConfigLine != "" {
		return redisparam.CheckLine(st.ConfigLine) == nil
	}
	return false
}
