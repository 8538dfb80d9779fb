package labhost

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strconv"
	"time"

	"redline/internal/host"
	"redline/internal/lab"
	"redline/internal/labdata"
	"redline/internal/remote"
	"redline/internal/serverhost"
	"redline/internal/target/policy"
)

// sshServerHost is the lab.ServerHost of a target of kind ssh: a redline
// session on the server host, reached through the user's own ssh. Every
// server-side step is an operation of that session; a tuned variant is
// applied scoped, so the session rolls it back by itself if the link
// dies, as it stops the servers it started.
type sshServerHost struct {
	t        labdata.TargetSpec
	dialOpts remote.DialOptions
	h        *serverhost.Remote
	redial   func(ctx context.Context, cleanup string) (*remote.Client, error)
	// learned is what the session did by itself after the link died, once
	// a new session has told it.
	learned *labdata.RemoteCleanup
}

// DialSSH returns the lab's way to open a session on a target's server
// host; its journal there is in o.StateDir when one is given.
func DialSSH(o Options) lab.DialServerHost {
	return func(ctx context.Context, t labdata.TargetSpec) (lab.ServerHost, error) {
		h, err := dialSSH(ctx, o, t)
		if err != nil {
			return nil, err
		}
		return h, nil
	}
}

func dialSSH(ctx context.Context, lo Options, t labdata.TargetSpec) (*sshServerHost, error) {
	if t.Sudo && lo.StateDir != "" {
		return nil, fmt.Errorf("--state-dir with target.sudo: the sudoers line of docs/remote.md allows no arguments, so the session there uses its default journal directory (drop --state-dir)")
	}
	o := remote.DialOptions{SSH: remote.SSH{Target: t.Host, Config: lo.SSHConfig}, Version: lo.Version, NoPush: t.NoPush, Sudo: t.Sudo,
		StateDir: lo.StateDir, HeartbeatTimeout: t.Heartbeat, DeadAfter: remote.DeadAfter(t.Heartbeat),
		Notify: lo.notify}
	h := &sshServerHost{t: t, dialOpts: o}
	h.redial = func(ctx context.Context, cleanup string) (*remote.Client, error) {
		o := h.dialOpts
		o.Cleanup = cleanup
		return remote.Dial(ctx, o)
	}
	c, err := h.redial(ctx, "")
	if err != nil {
		return nil, err
	}
	if lo.Cleanups != nil {
		lo.Cleanups(c.Hello.Hostname, c.Hello.Cleanups)
	}
	h.h = serverhost.NewRemote(c, t.Host)
	return h, nil
}

func (h *sshServerHost) lost() bool { return h.h.Lost() }

// ip is the server host's address the load goes to: the scenario's, or
// the one the ssh connection reached.
func (h *sshServerHost) ip() (string, error) {
	return policy.Bind("", h.t.Host, h.h.Info().SSHServerIP, h.t.Address, "give target.address, an IP of the server host the load can reach")
}

// Start starts a server on the host, on its ssh address.
func (h *sshServerHost) Start(ctx context.Context, spec labdata.ServerSpec, password string) (lab.HostServer, error) {
	ip, err := h.ip()
	if err != nil {
		return lab.HostServer{}, err
	}
	srv, err := h.h.RedisStart(ctx, serverhost.RedisStartArgs{Bind: ip, Config: spec.Config, CPUs: spec.CPUs, NUMANode: spec.NUMANode,
		Allocator: spec.Allocator, Binary: spec.Binary, Password: password})
	if err != nil {
		return lab.HostServer{}, err
	}
	return lab.HostServer{ID: srv.ID, Addr: net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port)), Pid: srv.Pid}, nil
}

// Stop stops a server Start started and returns the end of its log.
func (h *sshServerHost) Stop(ctx context.Context, id string) (string, error) {
	if h.lost() {
		return "", nil // the session stopped it (Close learns how)
	}
	return h.h.RedisStop(ctx, id)
}

// Attach checks the existing server at port on the host.
func (h *sshServerHost) Attach(ctx context.Context, port int, user, password string) (lab.HostServer, error) {
	ip, err := h.ip()
	if err != nil {
		return lab.HostServer{}, err
	}
	addr := net.JoinHostPort(ip, strconv.Itoa(port))
	a, err := h.h.RedisAttach(ctx, serverhost.RedisTarget{Addr: addr, User: user, Password: password})
	return lab.HostServer{Addr: addr, Pid: a.Pid}, err
}

// Snapshot reads the server host's model, without its processes.
func (h *sshServerHost) Snapshot(ctx context.Context) (*host.Snapshot, error) {
	snap, err := h.h.Snapshot(ctx, serverhost.SnapshotArgs{NoProcesses: true})
	if err != nil && h.h.Info().Hostname != "" {
		err = fmt.Errorf("%s: %w", h.h.Info().Hostname, err)
	}
	return snap, err
}

// Proc is the server host's /proc as sampled now; nil, nil once the link
// has died.
func (h *sshServerHost) Proc(ctx context.Context) (fs.FS, error) {
	if h.lost() {
		return nil, nil
	}
	return h.h.Sample(ctx)
}

// Describe records the link in the target's record.
func (h *sshServerHost) Describe(ti *labdata.TargetInfo) {
	i := h.h.Info()
	ti.SSH, ti.ServerHostname, ti.Session = h.t.Host, i.Hostname, i.Session
	ti.Topology = fmt.Sprintf("network: load from this host to %s, driven over ssh %s", i.Hostname, h.t.Host)
}

// Close says bye (the session then undoes whatever is left and stops its
// servers), or, when the link had died, learns from a new session what
// the old one did by itself.
func (h *sshServerHost) Close(ctx context.Context) *labdata.RemoteCleanup {
	if !h.lost() {
		// What the session could not undo is in its cleanup; the lab's
		// own restore has already reported its steps.
		_, _ = h.h.Close(ctx)
		return nil
	}
	h.h.Close(ctx)
	return h.learn(ctx)
}

// learn reconnects, for as long as the session's own heartbeat timeout
// and a margin, until a new session reports the old one's cleanup.
func (h *sshServerHost) learn(ctx context.Context) *labdata.RemoteCleanup {
	if h.learned != nil {
		return h.learned
	}
	info := h.h.Info()
	wait := info.HeartbeatTimeout + 30*time.Second
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var last error
	for ctx.Err() == nil {
		c, err := h.redial(ctx, info.Session)
		if err != nil {
			last = err
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
			continue
		}
		cl := findCleanup(c.Hello.Cleanups, info.Session)
		hangUp(c)
		if cl != nil {
			h.learned = remoteCleanupOf(cl)
			return h.learned
		}
		last = fmt.Errorf("its session %s has not reported ending yet", info.Session)
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
	h.learned = &labdata.RemoteCleanup{Unknown: fmt.Sprintf("could not reach %s again within %s (%v): check with redline tune status --ssh %s",
		h.t.Host, wait, last, h.t.Host)}
	return h.learned
}

func findCleanup(cls []remote.Cleanup, session string) *remote.Cleanup {
	for i := range cls {
		if cls[i].Session == session {
			return &cls[i]
		}
	}
	return nil
}

func remoteCleanupOf(c *remote.Cleanup) *labdata.RemoteCleanup {
	out := &labdata.RemoteCleanup{Reason: c.Reason, Time: c.Time, Errors: c.Errors}
	for _, r := range c.Restored {
		out.Restored = append(out.Restored, r.Steps...)
	}
	for _, s := range c.Stopped {
		out.Stopped = append(out.Stopped, fmt.Sprintf("redis-server pid %d port %d", s.Pid, s.Port))
	}
	for _, st := range c.Steered {
		out.Stopped = append(out.Stopped, fmt.Sprintf("steer (%d moves): %s", len(st.Moves), cmp.Or(st.Restored, "nothing to restore")))
	}
	return out
}

// Steerer steers the server host's NIC queue IRQs for a lab's steer
// variant, through the session: the moves are journaled there, and the
// session restores them by itself if the link dies. env.ServerPID is the
// lab's server's pid there, a server the session started or attached.
func (h *sshServerHost) Steerer() lab.Steerer {
	return hostSteerer{host: h.open, lost: h.lost, restoreFailed: func(msg string) error {
		return fmt.Errorf("steer on %s: %s (run redline tune rollback --ssh %s)", h.t.Host, msg, h.t.Host)
	}}
}

// Tuner applies the lab's variants on the server host, scoped to the
// session.
func (h *sshServerHost) Tuner() lab.Tuner {
	return &hostTuner{host: h.open, scope: serverhost.Scoped, lost: h.lost, restored: h.restoredBySession}
}

// Doctor diagnoses the server host and its server there.
func (h *sshServerHost) Doctor() lab.Diagnoser { return hostDoctor{host: h.open} }

func (h *sshServerHost) open(lab.Env) serverhost.Host { return h.h }

// restoredBySession is what the lost session restored, as an error
// unless it restored everything.
func (h *sshServerHost) restoredBySession(ctx context.Context) ([]labdata.PlanStep, error) {
	cl := h.learn(ctx)
	switch {
	case cl.Unknown != "":
		return nil, errors.New(cl.Unknown)
	case len(cl.Errors) > 0:
		return cl.Restored, fmt.Errorf("the session on %s restored by itself (%s) with errors: %q", h.t.Host, cl.Reason, cl.Errors)
	}
	return cl.Restored, nil
}

// hangUp ends a session client politely.
func hangUp(c *remote.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = c.Bye(ctx)
	_ = c.Close()
}
