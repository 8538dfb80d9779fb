package serverhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strconv"
	"sync"
	"time"

	"redline/internal/bench"
	"redline/internal/change"
	"redline/internal/doctor"
	"redline/internal/host"
	"redline/internal/remote"
	"redline/internal/steerspec"
	"redline/internal/tune"
)

// CallTimeout bounds one operation on a remote host (a doctor's sample
// adds its own length).
const CallTimeout = 10 * time.Minute

// Remote is a server host reached through a `redline session` over ssh:
// every operation is a request the session validates and answers with
// its Local.
type Remote struct {
	c   *remote.Client
	ssh string

	mu sync.Mutex
	// admitted are the servers the session has let this client's
	// operations reach (started, attached, admitted), by network and
	// address as sent.
	admitted map[string]bool
}

// NewRemote is the Host of session c, reached through ssh destination
// target (for messages).
func NewRemote(c *remote.Client, target string) *Remote {
	return &Remote{c: c, ssh: target, admitted: map[string]bool{}}
}

// admit asks the session, once per server, to let the later operations
// reach the servers ts: a session connects only to the servers it started
// or was asked to attach (redis.attach; admit only: no connection yet, and
// no password sent), and refuses there what its user could not reach.
func (r *Remote) admit(ctx context.Context, ts ...RedisTarget) error {
	for _, t := range ts {
		key := t.Network + " " + t.Addr
		r.mu.Lock()
		done := r.admitted[key]
		r.mu.Unlock()
		if done {
			continue
		}
		a := RedisAttachArgs{Redis: RedisTarget{Network: t.Network, Addr: t.Addr}, AdmitOnly: true}
		if err := r.call(ctx, 0, OpRedisAttach, a, nil); err != nil {
			return err
		}
		r.remember(t.Network, t.Addr)
	}
	return nil
}

func (r *Remote) remember(network, addr string) {
	r.mu.Lock()
	r.admitted[network+" "+addr] = true
	r.mu.Unlock()
}

// planTargets are the servers applying p reaches: redis (else the plan's
// own server) for its node-less Redis settings, and each node a setting
// names (over TCP); none for a plan without Redis settings.
func planTargets(p *tune.Plan, redis *RedisTarget) []RedisTarget {
	var out []RedisTarget
	server := false
	for _, c := range p.Changes {
		switch {
		case c.Kind != change.KindRedisConfig:
		case c.Node != "":
			out = append(out, RedisTarget{Network: "tcp", Addr: c.Node})
		default:
			server = true
		}
	}
	switch {
	case !server:
	case redis != nil:
		out = append(out, *redis)
	case p.Redis != nil && p.Redis.Addr != "":
		out = append(out, RedisTarget{Network: p.Redis.Network, Addr: p.Redis.Addr})
	}
	return out
}

// Client is the session's client (the bench workers' operations use it).
func (r *Remote) Client() *remote.Client { return r.c }

// Info is what the session said in hello.
func (r *Remote) Info() Info {
	h := r.c.Hello
	return Info{Hostname: h.Hostname, UID: h.UID, SSH: r.ssh, Session: h.Session, SSHServerIP: h.SSHServerIP, HeartbeatTimeout: h.HeartbeatTimeout, Cleanups: h.Cleanups}
}

// Lost says whether the link to the session has ended.
func (r *Remote) Lost() bool {
	select {
	case <-r.c.Done():
		return true
	default:
		return false
	}
}

// call runs one operation within CallTimeout (and extra); when the link
// has died it says what the server host does about it.
func (r *Remote) call(ctx context.Context, extra time.Duration, op string, args, result any) error {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout+extra)
	defer cancel()
	err := r.c.Call(ctx, op, args, result)
	if err != nil && r.Lost() {
		return fmt.Errorf("%w: the link to %s was lost; its session rolls back what it applied and stops its servers by itself within %s",
			err, r.ssh, r.c.Hello.HeartbeatTimeout)
	}
	return err
}

// Snapshot reads the host's model there.
func (r *Remote) Snapshot(ctx context.Context, a SnapshotArgs) (*host.Snapshot, error) {
	var snap host.Snapshot
	if err := r.call(ctx, 0, OpSnapshot, a, &snap); err != nil {
		return nil, err
	}
	return &snap, nil
}

// Doctor runs the rules there.
func (r *Remote) Doctor(ctx context.Context, a DoctorArgs) (*doctor.Report, error) {
	if a.Intrinsic != 0 {
		return nil, errors.New("--ssh checks the live server host; --intrinsic-latency is for this machine")
	}
	if a.Redis != nil {
		// The server asked for; with a fallback to the host alone, the
		// session's refusal to reach it is the reason the report gives.
		if err := r.admit(ctx, *a.Redis); err != nil && !a.HostOnlyFallback {
			return nil, err
		}
		if a.Cluster == nil || *a.Cluster {
			r.admitNodes(ctx, *a.Redis)
		}
	}
	var raw json.RawMessage
	if err := r.call(ctx, a.Sample, OpDoctor, a, &raw); err != nil {
		return nil, err
	}
	return doctor.ReadReport(bytes.NewReader(raw))
}

// admitNodes admits the nodes of the cluster seed belongs to that are on
// the session's host, for the doctor to read; a node elsewhere is not
// the session's to reach (the report says it could not be read), nor is
// a seed that is down or no cluster node an error here.
func (r *Remote) admitNodes(ctx context.Context, seed RedisTarget) {
	nodes, err := r.RedisNodes(ctx, seed)
	if err != nil {
		return
	}
	for _, n := range nodes {
		_ = r.admit(ctx, RedisTarget{Network: "tcp", Addr: n})
	}
}

func planWire(p *tune.Plan, redis *RedisTarget, scoped bool) (TuneApplyArgs, error) {
	raw, err := json.Marshal(p)
	return TuneApplyArgs{Plan: raw, Redis: redis, Scoped: scoped}, err
}

// TunePreview says what applying p there would do.
func (r *Remote) TunePreview(ctx context.Context, p *tune.Plan, redis *RedisTarget) ([]tune.Outcome, []string, error) {
	args, err := planWire(p, redis, false)
	if err != nil {
		return nil, nil, err
	}
	if err := r.admit(ctx, planTargets(p, redis)...); err != nil {
		return nil, nil, err
	}
	var out TunePreviewResult
	if err := r.call(ctx, 0, OpTunePreview, args, &out); err != nil {
		return nil, nil, err
	}
	return out.Outcomes, out.Warnings, nil
}

// TuneVerify compares p's values with the live ones there.
func (r *Remote) TuneVerify(ctx context.Context, p *tune.Plan, redis *RedisTarget) ([]tune.Outcome, error) {
	args, err := planWire(p, redis, false)
	if err != nil {
		return nil, err
	}
	if err := r.admit(ctx, planTargets(p, redis)...); err != nil {
		return nil, err
	}
	var out TuneVerifyResult
	if err := r.call(ctx, 0, OpTuneVerify, args, &out); err != nil {
		return nil, err
	}
	return out.Outcomes, nil
}

// TuneApply applies p there. A Kept apply is scoped until it has
// answered, then kept: a link lost during the apply makes the session
// undo it.
func (r *Remote) TuneApply(ctx context.Context, p *tune.Plan, redis *RedisTarget, scope Scope) (*tune.ApplyResult, error) {
	args, err := planWire(p, redis, true)
	if err != nil {
		return nil, err
	}
	if err := r.admit(ctx, planTargets(p, redis)...); err != nil {
		return nil, err
	}
	var out TuneApplyResult
	if err := r.call(ctx, 0, OpTuneApply, args, &out); err != nil {
		return nil, fmt.Errorf("%w (the session on the server host rolls back what it applied)", err)
	}
	if scope == Kept && out.Result != nil && out.Result.Session != "" {
		if err := r.TuneKeep(ctx, out.Result.Session); err != nil {
			return out.Result, fmt.Errorf("%w (the session on the server host rolls back what it applied)", err)
		}
	}
	return out.Result, errorOf(out.Error)
}

// TuneKeep keeps a scoped apply there.
func (r *Remote) TuneKeep(ctx context.Context, id string) error {
	return r.call(ctx, 0, OpTuneKeep, TuneKeepArgs{Session: id}, nil)
}

// TuneRollback rolls back there.
func (r *Remote) TuneRollback(ctx context.Context, a TuneRollbackArgs) (*tune.RollbackResult, error) {
	var out TuneRollbackResult
	if err := r.call(ctx, 0, OpTuneRollback, a, &out); err != nil {
		return nil, err
	}
	return out.Result, errorOf(out.Error)
}

// TuneStatus says where the journal there stands.
func (r *Remote) TuneStatus(ctx context.Context, redisPassword string) (*tune.StatusReport, error) {
	var rep tune.StatusReport
	if err := r.call(ctx, 0, OpTuneStatus, TuneStatusArgs{RedisPassword: redisPassword}, &rep); err != nil {
		return nil, err
	}
	return &rep, nil
}

// RedisStart starts a server there.
func (r *Remote) RedisStart(ctx context.Context, a RedisStartArgs) (remote.RedisServer, error) {
	var srv remote.RedisServer
	err := r.call(ctx, 0, OpRedisStart, a, &srv)
	if err == nil {
		r.remember("", net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port)))
	}
	return srv, err
}

// RedisStop stops a server there.
func (r *Remote) RedisStop(ctx context.Context, id string) (string, error) {
	var out RedisStopResult
	err := r.call(ctx, 0, OpRedisStop, RedisStopArgs{ID: id}, &out)
	return out.LogTail, err
}

// RedisAttach attaches a server there.
func (r *Remote) RedisAttach(ctx context.Context, t RedisTarget) (RedisAttached, error) {
	var a RedisAttached
	err := r.call(ctx, 0, OpRedisAttach, RedisAttachArgs{Redis: t}, &a)
	if err == nil {
		r.remember(t.Network, t.Addr)
	}
	return a, err
}

// RedisNodes lists a cluster's nodes as the host there reaches them.
func (r *Remote) RedisNodes(ctx context.Context, t RedisTarget) ([]string, error) {
	if err := r.admit(ctx, t); err != nil {
		return nil, err
	}
	var nodes []string
	err := r.call(ctx, 0, OpRedisNodes, RedisNodesArgs{Redis: t}, &nodes)
	return nodes, err
}

// Sample reads the host's counters there, served as an fs.FS rooted at
// /proc.
func (r *Remote) Sample(ctx context.Context) (fs.FS, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var smp Sample
	if err := r.call(ctx, 0, OpSample, struct{}{}, &smp); err != nil {
		return nil, err
	}
	return smp.ProcFS(), nil
}

// SteerStart starts steer there.
func (r *Remote) SteerStart(ctx context.Context, spec steerspec.Spec, pid int) (string, error) {
	var out SteerStarted
	err := r.call(ctx, 0, OpSteerStart, SteerStartArgs{Spec: spec, Pid: pid}, &out)
	return out.ID, err
}

// SteerStop stops steer there.
func (r *Remote) SteerStop(ctx context.Context, id string) (steerspec.Session, error) {
	var out SteerStopResult
	if err := r.call(ctx, 0, OpSteerStop, SteerStopArgs{ID: id}, &out); err != nil {
		return steerspec.Session{Finished: time.Now(), RestoreError: err.Error()}, err
	}
	if out.Error != "" {
		out.Session.RestoreError = out.Error
	}
	return out.Session, errorOf(out.Error)
}

// BenchWorker is a bench worker there (Workers).
func (r *Remote) BenchWorker(spec bench.WorkerSpec) (bench.Worker, error) {
	return NewBenchWorker(r.c, r.ssh, spec)
}

// Close says bye: the session stops its steers, rolls back its scoped
// applies and stops its servers, then ends. After a lost link the session
// has done so by itself; Close then only ends the transport.
func (r *Remote) Close(ctx context.Context) (*remote.Cleanup, error) {
	if r.Lost() {
		return nil, r.c.Close()
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := r.c.Bye(ctx)
	if cerr := r.c.Close(); err == nil {
		err = cerr
	}
	return nil, err
}

func errorOf(msg string) error {
	if msg == "" {
		return nil
	}
	return errors.New(msg)
}

var (
	_ Host    = (*Remote)(nil)
	_ Host    = (*Local)(nil)
	_ Workers = (*Remote)(nil)
)
