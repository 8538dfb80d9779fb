package lab

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"

	"redline/internal/atomicfile"
	"redline/internal/host"
	"redline/internal/labdata"
	"redline/internal/target/policy"
)

// ServerHost is the machine the server runs on when it is not the lab's
// own (a target of kind ssh). The lab starts, stops and samples its
// server there, diagnoses and tunes that machine, all through this
// interface; internal/target/labhost adapts a remote session to it, so the engine
// links neither the session nor the doctor or tune.
type ServerHost interface {
	// Start starts a server from spec (with password as requirepass, if
	// set) on a free port of the host's address the load reaches.
	Start(ctx context.Context, spec labdata.ServerSpec, password string) (HostServer, error)
	// Stop stops a server Start started and returns its log.
	Stop(ctx context.Context, id string) (log string, err error)
	// Attach checks an existing server on the host at port and returns
	// the address the load reaches it at and its pid there.
	Attach(ctx context.Context, port int, user, password string) (HostServer, error)
	// Snapshot reads the host's model without its processes: the facts
	// the result records (kernel, CPU, NICs, IRQ map) and the NIC queue
	// IRQs the run breakdowns count.
	Snapshot(ctx context.Context) (*host.Snapshot, error)
	// Proc is the host's /proc as of the call, for the run breakdown:
	// CPU time, softirqs, interrupts, softnet and the server's threads.
	Proc(ctx context.Context) (fs.FS, error)
	// Tuner, Doctor and Steerer act on the host, journaled there.
	Tuner() Tuner
	Doctor() Diagnoser
	Steerer() Steerer
	// Describe fills the target's record: the ssh destination, the name
	// the host gives itself, the session.
	Describe(ti *labdata.TargetInfo)
	// Close ends the link after the lab's own cleanup. When the link had
	// died, it returns what the host's session restored and stopped by
	// itself (or why that is unknown).
	Close(ctx context.Context) *labdata.RemoteCleanup
}

// HostServer is a server on a ServerHost.
type HostServer struct {
	ID   string // Start's, for Stop; empty for an attached server
	Addr string // host:port the load goes to
	Pid  int    // on the server host
}

// DialServerHost opens the link to a target's server host.
type DialServerHost func(ctx context.Context, t labdata.TargetSpec) (ServerHost, error)

// ensureRemote makes the server on the ssh host run with spec (or checks
// the existing one), restarting it when its settings differ.
func (t *target) ensureRemote(ctx context.Context, spec labdata.ServerSpec) error {
	if t.existing {
		if t.admin != nil {
			return nil
		}
		s, err := t.host.Attach(ctx, t.port, t.user, t.pass)
		if err != nil {
			return err
		}
		t.addr = s.Addr
		return t.connect(ctx)
	}
	if t.running && !t.stale && sameSpec(spec, t.spec) {
		return nil
	}
	t.stale = false
	if err := t.stopServer(); err != nil {
		return err
	}
	start := spec
	start.Config = policy.StartConfig(spec.Config)
	s, err := t.host.Start(ctx, start, t.pass)
	if err != nil {
		return err
	}
	t.remoteID, t.spec, t.running, t.addr = s.ID, spec, true, s.Addr
	return t.connect(ctx)
}

// stopRemote stops the server the lab started on the ssh host and keeps
// its log next to the results.
func (t *target) stopRemote() error {
	log, err := t.host.Stop(context.Background(), t.remoteID)
	if t.logDir != "" && log != "" {
		p := filepath.Join(t.logDir, fmt.Sprintf("redis-server-%d.log", len(t.logs)+1))
		if atomicfile.Write(p, []byte(log), 0o644) == nil {
			t.logs = append(t.logs, p)
		}
	}
	return err
}

// serverHost opens the link to a kind ssh target's server host, whose
// tuner and doctor then act for the lab.
func (l *labRun) serverHost(ctx context.Context) error {
	if l.s.Target.Kind != labdata.KindSSH {
		return nil
	}
	l.event(Event{Message: "opening a session on " + l.s.Target.Host})
	h, err := l.o.ServerHost(ctx, l.s.Target)
	if err != nil {
		return err
	}
	l.tg.host = h
	l.o.Tuner, l.o.Doctor, l.o.Steerer = h.Tuner(), h.Doctor(), h.Steerer()
	return nil
}

// serverHostFacts records the server host's description.
func (l *labRun) serverHostFacts(ctx context.Context) {
	if l.tg.host == nil {
		return
	}
	snap, err := l.tg.host.Snapshot(ctx)
	if err != nil {
		f := labdata.HostFacts{Notes: []string{fmt.Sprintf("server host facts incomplete: %v", err)}}
		l.res.ServerHost = &f
		return
	}
	f := HostFactsOf(snap)
	l.res.ServerHost = &f
}
