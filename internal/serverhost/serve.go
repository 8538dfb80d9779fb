package serverhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"redline/internal/doctor"
	"redline/internal/host"
	"redline/internal/redisadmin"
	"redline/internal/remote"
	"redline/internal/tune"
)

// ServeOptions configure `redline session`, the server host's side of
// --ssh and of the lab's ssh target.
type ServeOptions struct {
	// Version is this redline's version: the only one a client may be.
	Version string
	// StateDir holds the tune journal; tune.DefaultStateDir when empty.
	StateDir string
	// System makes the machine tune works on; tune.LiveSystem when nil
	// (tests rehearse on a tree).
	System func() *tune.System
	// RedisBinary is the redis-server the session starts; from PATH when
	// empty. It is the session command's to choose, never the client's.
	RedisBinary string
	// Log receives one line per operation (never arguments: they may
	// hold passwords); nil discards.
	Log io.Writer
}

// Serve runs a session on in and out (remote.Serve: the transport, the
// heartbeat, the dead man's switch): each operation's request is
// validated as strictly as a plan file and answered by a Local, whose
// ledger is undone when the session ends.
func Serve(ctx context.Context, in io.Reader, out io.Writer, o ServeOptions) *remote.Cleanup {
	if o.StateDir == "" {
		o.StateDir = tune.DefaultStateDir
	}
	return remote.Serve(ctx, in, out, remote.SessionOptions{Version: o.Version, StateDir: o.StateDir, Log: o.Log,
		Host: func(id string) remote.Handler {
			logf := func(format string, args ...any) {
				if o.Log != nil {
					fmt.Fprintf(o.Log, "redline session %s: "+format+"\n", append([]any{id}, args...)...)
				}
			}
			return &handler{l: NewLocal(LocalOptions{StateDir: o.StateDir, System: o.System, RedisBinary: o.RedisBinary,
				Holder: "a lab's redline session " + id, Log: logf}),
				w: &benchWorkers{version: o.Version}, a: newAdmitted()}
		}})
}

// ServeWorker runs `redline session --worker`: a local bench worker of
// the redline that started it over pipes (remote.LocalWorker). It answers
// the bench operations only, its workers may use a unix socket and
// network namespaces, and it has no state directory.
func ServeWorker(ctx context.Context, in io.Reader, out io.Writer, version string) *remote.Cleanup {
	return remote.Serve(ctx, in, out, remote.SessionOptions{Version: version, Worker: true,
		Host: func(string) remote.Handler { return &handler{w: &benchWorkers{version: version, local: true}} }})
}

// handler is a session's remote.Handler: validate, call the Local and the
// bench workers. A worker session's has no Local.
type handler struct {
	l *Local
	w *benchWorkers
	// a are the servers the session may connect to (admit.go); every
	// operation that reads or writes a Redis runs under its guard.
	a *admitted
}

// guarded is ctx whose Redis connections go only to the servers the
// session started or attached.
func (h *handler) guarded(ctx context.Context) context.Context {
	return redisadmin.WithGuard(ctx, h.a.guard)
}

// End stops the bench workers (they load a server, perhaps one of those
// the Local stops), then undoes the Local's ledger.
func (h *handler) End(ctx context.Context, c *remote.Cleanup) {
	h.w.end(ctx, c)
	if h.l != nil {
		h.l.End(ctx, c)
	}
}

// Async starts a bench worker's prepare or result.
func (h *handler) Async(ctx context.Context, op string, raw json.RawMessage) (func() (any, error), error) {
	return h.w.async(ctx, op, raw)
}

// Do answers one operation.
func (h *handler) Do(ctx context.Context, op string, raw json.RawMessage) (any, error) {
	if res, err := h.w.do(op, raw); !errors.Is(err, remote.ErrUnknownOp) {
		return res, err
	}
	if h.l == nil {
		return nil, remote.ErrUnknownOp
	}
	switch op {
	case remote.OpSnapshot:
		var a remote.SnapshotArgs
		if err := remote.DecodeArgs(raw, &a); err != nil {
			return nil, err
		}
		if err := checkIRQPatterns(a.IRQPatterns); err != nil {
			return nil, err
		}
		// Only redis-servers: a root session would otherwise hand out any
		// process's command line, memory map and cgroup.
		for _, pid := range a.PIDs {
			if err := checkRedisProcess(pid); err != nil {
				return nil, err
			}
		}
		return h.l.Snapshot(ctx, a)
	case remote.OpDoctor:
		return h.doctor(ctx, raw)
	case remote.OpTunePreview:
		a, p, err := planArgs(raw)
		if err != nil {
			return nil, err
		}
		outs, warns, err := h.l.TunePreview(h.guarded(ctx), p, a.Redis)
		return TunePreviewResult{Outcomes: outs, Warnings: warns}, err
	case remote.OpTuneVerify:
		a, p, err := planArgs(raw)
		if err != nil {
			return nil, err
		}
		outs, err := h.l.TuneVerify(h.guarded(ctx), p, a.Redis)
		return TuneVerifyResult{Outcomes: outs}, err
	case remote.OpTuneApply:
		a, p, err := planArgs(raw)
		if err != nil {
			return nil, err
		}
		scope := Kept
		if a.Scoped {
			scope = Scoped
		}
		res, err := h.l.TuneApply(h.guarded(ctx), p, a.Redis, scope)
		if res == nil {
			return nil, err
		}
		return TuneApplyResult{Result: res, Error: errString(err)}, nil
	case remote.OpTuneKeep:
		var a remote.TuneKeepArgs
		if err := remote.DecodeArgs(raw, &a); err != nil {
			return nil, err
		}
		if err := validateSessionID(a.Session); err != nil {
			return nil, err
		}
		return struct{}{}, h.l.TuneKeep(ctx, a.Session)
	case remote.OpTuneRollback:
		var a remote.TuneRollbackArgs
		if err := remote.DecodeArgs(raw, &a); err != nil {
			return nil, err
		}
		if err := validateSessionID(a.Session); err != nil {
			return nil, err
		}
		res, err := h.l.TuneRollback(ctx, a)
		if res == nil {
			return nil, err
		}
		return TuneRollbackResult{Result: res, Error: errString(err)}, nil
	case remote.OpTuneStatus:
		var a remote.TuneStatusArgs
		if err := remote.DecodeArgs(raw, &a); err != nil {
			return nil, err
		}
		return h.l.TuneStatus(ctx, a.RedisPassword)
	case remote.OpRedisStart:
		var a remote.RedisStartArgs
		if err := remote.DecodeArgs(raw, &a); err != nil {
			return nil, err
		}
		if err := validateRedisStart(&a); err != nil {
			return nil, err
		}
		srv, err := h.l.RedisStart(ctx, a)
		if err == nil {
			h.a.start(srv)
		}
		return srv, err
	case remote.OpRedisStop:
		var a remote.RedisStopArgs
		if err := remote.DecodeArgs(raw, &a); err != nil {
			return nil, err
		}
		tail, err := h.l.RedisStop(ctx, a.ID)
		h.a.stop(a.ID)
		return remote.RedisStopResult{LogTail: tail}, err
	case remote.OpRedisAttach:
		var a remote.RedisAttachArgs
		if err := remote.DecodeArgs(raw, &a); err != nil {
			return nil, err
		}
		if err := validateRedisTarget(&a.Redis); err != nil {
			return nil, err
		}
		added, err := h.a.admit(ctx, a.Redis)
		if err != nil || a.AdmitOnly {
			return remote.RedisAttached{}, err
		}
		res, err := h.l.RedisAttach(h.guarded(ctx), a.Redis)
		if err != nil && added {
			h.a.forget(a.Redis)
		}
		return res, err
	case remote.OpRedisNodes:
		var a remote.RedisNodesArgs
		if err := remote.DecodeArgs(raw, &a); err != nil {
			return nil, err
		}
		if err := validateRedisTarget(&a.Redis); err != nil {
			return nil, err
		}
		return h.l.RedisNodes(h.guarded(ctx), a.Redis)
	case remote.OpSample:
		if err := remote.DecodeArgs(raw, &struct{}{}); err != nil {
			return nil, err
		}
		return h.l.sample(), nil
	case remote.OpSteerStart:
		var a remote.SteerStartArgs
		if err := remote.DecodeArgs(raw, &a); err != nil {
			return nil, err
		}
		var bad []string
		a.Spec.Check(func(field, format string, args ...any) {
			bad = append(bad, "steer."+field+": "+fmt.Sprintf(format, args...))
		})
		if len(bad) > 0 {
			return nil, errors.New(strings.Join(bad, "; "))
		}
		id, err := h.l.SteerStart(ctx, a.Spec, a.Pid)
		return remote.SteerStarted{ID: id}, err
	case remote.OpBuild:
		return h.build(ctx, raw)
	case remote.OpSteerStop:
		var a remote.SteerStopArgs
		if err := remote.DecodeArgs(raw, &a); err != nil {
			return nil, err
		}
		rec, err := h.l.SteerStop(ctx, a.ID)
		if err != nil && rec.Finished.IsZero() {
			return nil, err // no such steer
		}
		return remote.SteerStopResult{Session: rec, Error: errString(err)}, nil
	}
	return nil, remote.ErrUnknownOp
}

func (h *handler) doctor(ctx context.Context, raw json.RawMessage) (any, error) {
	var a remote.DoctorArgs
	if err := remote.DecodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if a.Intrinsic != 0 {
		return nil, errors.New("intrinsic latency: a session does not saturate a core of its host (--intrinsic-latency is for this machine)")
	}
	if err := validateRedisTarget(a.Redis); err != nil {
		return nil, err
	}
	if a.Sample < 0 || a.Sample > 10*time.Minute {
		return nil, fmt.Errorf("sample %s: want 0 to 10m", a.Sample)
	}
	if a.Timeout < 0 || a.Timeout > 10*time.Minute {
		return nil, fmt.Errorf("timeout %s: want 0 to 10m", a.Timeout)
	}
	if err := checkIRQPatterns(a.IRQPatterns); err != nil {
		return nil, err
	}
	rep, err := h.l.Doctor(h.guarded(ctx), a)
	if err != nil {
		return nil, err
	}
	return doctorJSON(rep)
}

// doctorJSON is the report as doctor --json writes it: the wire form of a
// report (doctor.ReadReport reads it back).
func doctorJSON(rep *doctor.Report) (json.RawMessage, error) {
	var b strings.Builder
	if err := doctor.WriteJSON(&b, rep); err != nil {
		return nil, err
	}
	return json.RawMessage(b.String()), nil
}

func checkIRQPatterns(ps []string) error {
	for _, p := range ps {
		if err := host.ValidateIRQPattern(p); err != nil {
			return err
		}
	}
	return nil
}

// planArgs decodes a plan operation's arguments and the plan in them.
func planArgs(raw json.RawMessage) (*remote.TuneApplyArgs, *tune.Plan, error) {
	var a remote.TuneApplyArgs
	if err := remote.DecodeArgs(raw, &a); err != nil {
		return nil, nil, err
	}
	if err := validateRedisTarget(a.Redis); err != nil {
		return nil, nil, err
	}
	p, err := tune.ParsePlan(a.Plan, ".json")
	if err != nil {
		return nil, nil, err
	}
	return &a, p, nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
