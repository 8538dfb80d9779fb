package cli

import (
	"fmt"
	"os"

	"redline/internal/secret"
	"redline/internal/textsafe"
)

// finishTarget checks the target's flags and moves the server host's
// between the command line and the journal (target.Spec): --resume
// reopens the host the session had, with the password read again.
func (o *autotuneOptions) finishTarget() error {
	t := &o.target
	if o.engine.Resume {
		o.remote = remoteOptions{target: t.SSH, config: t.SSHConfig, sudo: t.SSHSudo, noPush: t.NoPush, heartbeat: t.Heartbeat}
	} else {
		t.SSH, t.SSHConfig, t.SSHSudo, t.NoPush, t.Heartbeat = o.remote.target, o.remote.config, o.remote.sudo, o.remote.noPush, o.remote.heartbeat
		if t.SSH == "" {
			t.Heartbeat = 0
		}
	}
	if err := o.remote.checkLink("autotune"); err != nil {
		return err
	}
	attached := t.Attached()
	bad := func(format string, args ...any) error {
		return usageError("redline autotune: "+format, args...)
	}
	switch {
	case t.Addr != "" && t.Socket != "":
		return bad("--addr or --socket, not both")
	case attached && len(t.ServerConfig) > 0:
		return bad("--server-config is the managed server's: an attached one (--addr, --socket) keeps its own")
	case !attached && (t.User != "" || t.PassFile != ""):
		return bad("--user and --pass-file are an attached server's (--addr or --socket)")
	case t.Socket != "" && t.SSH != "":
		return bad("--socket is a path on this host; with --ssh give --addr HOST:PORT")
	case t.NetNS && (attached || t.SSH != ""):
		return bad("--netns starts a managed server here: not with --addr, --socket or --ssh")
	case t.NetNS && os.Geteuid() != 0:
		return bad("--netns makes network namespaces: needs root")
	case t.SSHSudo && t.StateDir != "":
		return bad("--state-dir with --ssh-sudo: the sudoers line of docs/remote.md allows no arguments, so the session there uses its default journal directory")
	}
	if err := o.finishCluster(); err != nil {
		return err
	}
	if attached {
		g, err := secret.CommandPassword("", t.PassFile)
		if err != nil {
			return bad("--pass-file: %v", err)
		}
		if o.password, err = o.resumePassword(g); err != nil {
			return bad("%v", err)
		}
	}
	return nil
}

// resumePassword is the password for the attached server: the command
// line's; on --resume, for the journal's address only when the command
// line names it again (--addr, --socket), or the environment's for a
// listener of root's or the invoking user's (secret.Given.ForFileAddress).
func (o *autotuneOptions) resumePassword(g secret.Given) (string, error) {
	if !o.engine.Resume || o.addrConfirmed || g.Value == "" {
		return g.Value, nil
	}
	network, addr, flag := "tcp", o.target.Addr, "--addr"
	if o.target.Socket != "" {
		network, addr, flag = "unix", o.target.Socket, "--socket"
	}
	again := fmt.Sprintf("give %s %s again with --resume to send it a password (the address is the journal's, a file's word)", flag, textsafe.Printable(addr))
	if g.Explicit {
		return "", fmt.Errorf("--pass-file: %s", again)
	}
	pw, withheld := g.ForFileAddress(network, addr)
	if withheld != "" {
		return "", fmt.Errorf("%s; or %s", withheld, again)
	}
	return pw, nil
}

// rollbackHint is the command that restores the trials' changes after a
// crash.
func (o *autotuneOptions) rollbackHint() string {
	cmd := "redline tune rollback"
	if o.target.SSH != "" {
		cmd += " --ssh " + o.target.SSH
	}
	if o.stateDir != "" {
		cmd += " --state-dir " + o.stateDir
	}
	return cmd
}
