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

	"redline/internal/autotune"
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
	return target.CheckJournal(eo.Candidates, *t)
}
