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

// Do answers one operation: a bench worker's, else the Local's through
// its entry in operations.
func (h *handler) Do(ctx context.Context, op string, raw json.RawMessage) (any, error) {
	if res, err := h.w.do(op, raw); !errors.Is(err, remote.ErrUnknownOp) {
		return res, err
	}
	o, ok := operations[op]
	if h.l == nil || !ok {
		return nil, remote.ErrUnknownOp
	}
	return o(h, ctx, raw)
}

// operation answers one request: it decodes the arguments strictly,
// validates them, and calls the Local.
type operation func(h *handler, ctx context.Context, raw json.RawMessage) (any, error)

// operations is the server-host API a session serves, an entry an
// operation: its name (protocol.go), its validator and what it calls.
// Adding an operation adds its name and types to protocol.go, its entry
// here and its method to Host (docs/remote.md).
var operations = map[string]operation{
	OpSnapshot:     op(checkSnapshot, (*handler).snapshot),
	OpDoctor:       op(checkDoctor, (*handler).doctor),
	OpTunePreview:  op(checkPlanArgs, (*handler).tunePreview),
	OpTuneVerify:   op(checkPlanArgs, (*handler).tuneVerify),
	OpTuneApply:    op(checkPlanArgs, (*handler).tuneApply),
	OpTuneKeep:     op(func(a *TuneKeepArgs) error { return validateSessionID(a.Session) }, (*handler).tuneKeep),
	OpTuneRollback: op(func(a *TuneRollbackArgs) error { return validateSessionID(a.Session) }, (*handler).tuneRollback),
	OpTuneStatus:   op(nil, (*handler).tuneStatus),
	OpRedisStart:   op(validateRedisStart, (*handler).redisStart),
	OpRedisStop:    op(nil, (*handler).redisStop),
	OpRedisAttach:  op(func(a *RedisAttachArgs) error { return validateRedisTarget(&a.Redis) }, (*handler).redisAttach),
	OpRedisNodes:   op(func(a *RedisNodesArgs) error { return validateRedisTarget(&a.Redis) }, (*handler).redisNodes),
	OpSample:       op(nil, func(h *handler, _ context.Context, _ *struct{}) (any, error) { return h.l.sample(), nil }),
	OpSteerStart:   op(checkSteerStart, (*handler).steerStart),
	OpSteerStop:    op(nil, (*handler).steerStop),
	OpBuild:        op(nil, (*handler).build), // refusals are its result: build.go
}

// op makes an operation of a validator (nil: decoding is the whole check)
// and the call it guards.
func op[A any](check func(*A) error, call func(*handler, context.Context, *A) (any, error)) operation {
	return func(h *handler, ctx context.Context, raw json.RawMessage) (any, error) {
		var a A
		if err := remote.DecodeArgs(raw, &a); err != nil {
			return nil, err
		}
		if check != nil {
			if err := check(&a); err != nil {
				return nil, err
			}
		}
		return call(h, ctx, &a)
	}
}

// checkSnapshot: only redis-servers' PIDs, since a root session would
// otherwise hand out any process's command line, memory map and cgroup.
func checkSnapshot(a *SnapshotArgs) error {
	if err := checkIRQPatterns(a.IRQPatterns); err != nil {
		return err
	}
	for _, pid := range a.PIDs {
		if err := checkRedisProcess(pid); err != nil {
			return err
		}
	}
	return nil
}

func (h *handler) snapshot(ctx context.Context, a *SnapshotArgs) (any, error) {
	return h.l.Snapshot(ctx, *a)
}

// checkPlanArgs checks a plan operation's Redis; the plan itself is
// parsed (and so checked) by plan.
func checkPlanArgs(a *TuneApplyArgs) error { return validateRedisTarget(a.Redis) }

func plan(a *TuneApplyArgs) (*tune.Plan, error) { return tune.ParsePlan(a.Plan, ".json") }

func (h *handler) tunePreview(ctx context.Context, a *TuneApplyArgs) (any, error) {
	p, err := plan(a)
	if err != nil {
		return nil, err
	}
	outs, warns, err := h.l.TunePreview(h.guarded(ctx), p, a.Redis)
	return TunePreviewResult{Outcomes: outs, Warnings: warns}, err
}

func (h *handler) tuneVerify(ctx context.Context, a *TuneApplyArgs) (any, error) {
	p, err := plan(a)
	if err != nil {
		return nil, err
	}
	outs, err := h.l.TuneVerify(h.guarded(ctx), p, a.Redis)
	return TuneVerifyResult{Outcomes: outs}, err
}

func (h *handler) tuneApply(ctx context.Context, a *TuneApplyArgs) (any, error) {
	p, err := plan(a)
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
}

func (h *handler) tuneKeep(ctx context.Context, a *TuneKeepArgs) (any, error) {
	return struct{}{}, h.l.TuneKeep(ctx, a.Session)
}

func (h *handler) tuneRollback(ctx context.Context, a *TuneRollbackArgs) (any, error) {
	res, err := h.l.TuneRollback(ctx, *a)
	if res == nil {
		return nil, err
	}
	return TuneRollbackResult{Result: res, Error: errString(err)}, nil
}

func (h *handler) tuneStatus(ctx context.Context, a *TuneStatusArgs) (any, error) {
	return h.l.TuneStatus(ctx, a.RedisPassword)
}

func (h *handler) redisStart(ctx context.Context, a *RedisStartArgs) (any, error) {
	srv, err := h.l.RedisStart(ctx, *a)
	if err == nil {
		h.a.start(srv)
	}
	return srv, err
}

func (h *handler) redisStop(ctx context.Context, a *RedisStopArgs) (any, error) {
	tail, err := h.l.RedisStop(ctx, a.ID)
	h.a.stop(a.ID)
	return RedisStopResult{LogTail: tail}, err
}

func (h *handler) redisAttach(ctx context.Context, a *RedisAttachArgs) (any, error) {
	added, err := h.a.admit(ctx, a.Redis)
	if err != nil || a.AdmitOnly {
		return RedisAttached{}, err
	}
	res, err := h.l.RedisAttach(h.guarded(ctx), a.Redis)
	if err != nil && added {
		h.a.forget(a.Redis)
	}
	return res, err
}

func (h *handler) redisNodes(ctx context.Context, a *RedisNodesArgs) (any, error) {
	return h.l.RedisNodes(h.guarded(ctx), a.Redis)
}

// checkSteerStart applies the one set of steer ranges (steerspec.Check).
func checkSteerStart(a *SteerStartArgs) error {
	var bad []string
	a.Spec.Check(func(field, format string, args ...any) {
		bad = append(bad, "steer."+field+": "+fmt.Sprintf(format, args...))
	})
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

func (h *handler) steerStart(ctx context.Context, a *SteerStartArgs) (any, error) {
	id, err := h.l.SteerStart(ctx, a.Spec, a.Pid)
	return SteerStarted{ID: id}, err
}

func (h *handler) steerStop(ctx context.Context, a *SteerStopArgs) (any, error) {
	rec, err := h.l.SteerStop(ctx, a.ID)
	if err != nil && rec.Finished.IsZero() {
		return nil, err // no such steer
	}
	return SteerStopResult{Session: rec, Error: errString(err)}, nil
}

// checkDoctor bounds what a session's doctor may cost its host.
func checkDoctor(a *DoctorArgs) error {
	if a.Intrinsic != 0 {
		return errors.New("intrinsic latency: a session does not saturate a core of its host (--intrinsic-latency is for this machine)")
	}
	if err := validateRedisTarget(a.Redis); err != nil {
		return err
	}
	if a.Sample < 0 || a.Sample > 10*time.Minute {
		return fmt.Errorf("sample %s: want 0 to 10m", a.Sample)
	}
	if a.Timeout < 0 || a.Timeout > 10*time.Minute {
		return fmt.Errorf("timeout %s: want 0 to 10m", a.Timeout)
	}
	return checkIRQPatterns(a.IRQPatterns)
}

func (h *handler) doctor(ctx context.Context, a *DoctorArgs) (any, error) {
	rep, err := h.l.Doctor(h.guarded(ctx), *a)
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

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
