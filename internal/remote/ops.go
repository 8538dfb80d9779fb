package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"time"

	"redline/internal/doctor"
	_ "redline/internal/doctor/rules" // registers the rules
	"redline/internal/host"
	"redline/internal/redisadmin"
	"redline/internal/redisserver"
	"redline/internal/tune"
)

// opFunc answers one operation; its result is encoded as the reply.
type opFunc func(s *session, ctx context.Context, args json.RawMessage) (any, error)

// ops is every operation a session accepts.
var ops = map[string]opFunc{
	OpHello:        (*session).hello,
	OpHeartbeat:    func(*session, context.Context, json.RawMessage) (any, error) { return struct{}{}, nil },
	OpSnapshot:     (*session).snapshot,
	OpDoctor:       (*session).doctor,
	OpTunePreview:  (*session).tunePreview,
	OpTuneApply:    (*session).tuneApply,
	OpTuneKeep:     (*session).tuneKeep,
	OpTuneRollback: (*session).tuneRollback,
	OpTuneStatus:   (*session).tuneStatus,
	OpRedisStart:   (*session).redisStart,
	OpRedisStop:    (*session).redisStop,
	OpSample:       (*session).sample,
	OpBye:          func(*session, context.Context, json.RawMessage) (any, error) { return struct{}{}, nil },
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

func (s *session) hello(_ context.Context, raw json.RawMessage) (any, error) {
	var a HelloArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if a.Protocol != ProtocolVersion {
		return nil, fmt.Errorf("protocol %d: this session speaks %d (redline %s)", a.Protocol, ProtocolVersion, s.o.Version)
	}
	if a.HeartbeatTimeout != 0 {
		s.timeout = min(max(a.HeartbeatTimeout, MinHeartbeatTimeout), MaxHeartbeatTimeout)
	}
	hn, _ := os.Hostname()
	return HelloResult{Protocol: ProtocolVersion, Version: s.o.Version, Hostname: hn, UID: os.Getuid(),
		StateDir: s.o.StateDir, HeartbeatTimeout: s.timeout, Cleanups: s.takeCleanups()}, nil
}

func (s *session) snapshot(_ context.Context, raw json.RawMessage) (any, error) {
	var a SnapshotArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	for _, p := range a.IRQPatterns {
		if err := host.ValidateIRQPattern(p); err != nil {
			return nil, err
		}
	}
	fs, err := host.NewFS("/")
	if err != nil {
		return nil, err
	}
	ports := append(append([]int{}, host.DefaultPorts...), a.Ports...)
	return host.Read(fs, host.Options{PIDs: a.PIDs, IRQPatterns: a.IRQPatterns, Ports: ports, NoProcesses: a.NoProcesses})
}

func (s *session) doctor(ctx context.Context, raw json.RawMessage) (any, error) {
	var a DoctorArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if err := validateRedisTarget(a.Redis); err != nil {
		return nil, err
	}
	if a.Sample < 0 || a.Sample > 10*time.Minute {
		return nil, fmt.Errorf("sample %s: want 0 to 10m", a.Sample)
	}
	for _, p := range a.IRQPatterns {
		if err := host.ValidateIRQPattern(p); err != nil {
			return nil, err
		}
	}
	g := doctor.GatherOptions{Root: "/", Pid: a.Pid, Sample: a.Sample, Iface: a.Iface, ExpectedClients: a.Clients,
		Host: host.Options{IRQPatterns: a.IRQPatterns}}
	if r := a.Redis; r != nil {
		g.Redis = &redisadmin.Options{Network: r.Network, Addr: r.Addr, Username: r.User, Password: r.Password, Timeout: redisadmin.DefaultTimeout}
	}
	facts, err := doctor.Gather(ctx, g)
	if err != nil {
		return nil, err
	}
	rep, err := doctor.Run(ctx, facts, doctor.Options{Only: a.Only, Skip: a.Skip})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := doctor.WriteJSON(&b, rep); err != nil {
		return nil, err
	}
	return json.RawMessage(b.Bytes()), nil
}

func (s *session) system(r *RedisTarget) *tune.System {
	mk := s.o.System
	if mk == nil {
		mk = tune.LiveSystem
	}
	sys := mk()
	if r != nil {
		sys.Redis = tune.RedisOptions{Network: r.Network, Addr: r.Addr, User: r.User, Password: r.Password}
	}
	return sys
}

// planArgs decodes a plan operation's arguments and the plan in them.
func planArgs(raw json.RawMessage) (*TuneApplyArgs, *tune.Plan, error) {
	var a TuneApplyArgs
	if err := decodeArgs(raw, &a); err != nil {
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

func (s *session) tunePreview(ctx context.Context, raw json.RawMessage) (any, error) {
	a, p, err := planArgs(raw)
	if err != nil {
		return nil, err
	}
	sys := s.system(a.Redis)
	defer sys.Close()
	outs, err := tune.Preview(ctx, sys, p)
	if err != nil {
		return nil, err
	}
	return TunePreviewResult{Outcomes: outs, Warnings: tune.Warnings(sys, p)}, nil
}

func (s *session) tuneApply(ctx context.Context, raw json.RawMessage) (any, error) {
	a, p, err := planArgs(raw)
	if err != nil {
		return nil, err
	}
	sys := s.system(a.Redis)
	defer sys.Close()
	res, err := tune.Apply(ctx, sys, p, tune.ApplyOptions{StateDir: s.o.StateDir})
	if res == nil {
		return nil, err
	}
	if res.Session != "" && a.Scoped {
		s.scoped = append(s.scoped, res.Session)
		s.password[res.Session] = sys.Redis.Password
	}
	out := TuneApplyResult{Result: res}
	if err != nil {
		out.Error = err.Error()
	}
	return out, nil
}

func (s *session) tuneRollback(ctx context.Context, raw json.RawMessage) (any, error) {
	var a TuneRollbackArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if err := validateSessionID(a.Session); err != nil {
		return nil, err
	}
	res, err := tune.Rollback(ctx, tune.RollbackOptions{StateDir: s.o.StateDir, Session: a.Session, Last: a.Last, DryRun: a.DryRun, RedisPassword: a.RedisPassword})
	if res == nil {
		return nil, err
	}
	if !a.DryRun && err == nil {
		s.forgetScoped(a.Session, a.Last)
	}
	out := TuneRollbackResult{Result: res}
	if err != nil {
		out.Error = err.Error()
	}
	return out, nil
}

func (s *session) tuneKeep(_ context.Context, raw json.RawMessage) (any, error) {
	var a TuneKeepArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if a.Session == "" {
		return nil, fmt.Errorf("keep: which session?")
	}
	if err := validateSessionID(a.Session); err != nil {
		return nil, err
	}
	s.forgetScoped(a.Session, false)
	return struct{}{}, nil
}

// forgetScoped drops scoped applies the client rolled back itself.
func (s *session) forgetScoped(id string, last bool) {
	switch {
	case id != "":
		for i, x := range s.scoped {
			if x == id {
				s.scoped = append(s.scoped[:i], s.scoped[i+1:]...)
				break
			}
		}
	case last && len(s.scoped) > 0:
		s.scoped = s.scoped[:len(s.scoped)-1]
	case !last:
		s.scoped = nil
	}
}

func (s *session) tuneStatus(ctx context.Context, raw json.RawMessage) (any, error) {
	var a TuneStatusArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	return tune.Journaled(ctx, tune.StatusOptions{StateDir: s.o.StateDir, RedisPassword: a.RedisPassword})
}

func (s *session) redisStart(ctx context.Context, raw json.RawMessage) (any, error) {
	var a RedisStartArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if err := validateRedisStart(&a); err != nil {
		return nil, err
	}
	o := redisserver.Options{Binary: s.o.RedisBinary, Bind: a.Bind, Port: a.Port, Config: a.Config}
	if a.Password != "" {
		o.Config = append(append([]string{}, o.Config...), "requirepass "+strconv.Quote(a.Password))
	}
	if a.CPUs != "" {
		o.Wrap = []string{"taskset", "-c", a.CPUs}
	}
	srv, err := redisserver.Start(ctx, o)
	if err != nil {
		return nil, err
	}
	s.nextSrv++
	info := RedisServer{ID: "srv" + strconv.Itoa(s.nextSrv), Host: srv.Host, Port: srv.Port, Pid: srv.Pid(), Dir: srv.Dir, LogPath: srv.LogPath}
	s.servers[info.ID] = &managed{info: info, srv: srv}
	return info, nil
}

func (s *session) redisStop(_ context.Context, raw json.RawMessage) (any, error) {
	var a RedisStopArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	m, ok := s.servers[a.ID]
	if !ok {
		return nil, fmt.Errorf("no server %q started by this session", a.ID)
	}
	tail := m.srv.LogTail(20)
	delete(s.servers, a.ID)
	if err := m.srv.Stop(); err != nil {
		return nil, err
	}
	return RedisStopResult{LogTail: tail}, nil
}

func (s *session) sample(_ context.Context, raw json.RawMessage) (any, error) {
	if err := decodeArgs(raw, &struct{}{}); err != nil {
		return nil, err
	}
	smp := Sample{Time: time.Now().UTC(), Files: map[string]string{}}
	files := append([]string{}, SampledFiles...)
	for _, id := range sortedKeys(s.servers) {
		files = append(files, fmt.Sprintf("/proc/%d/stat", s.servers[id].info.Pid))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			if smp.Errors == nil {
				smp.Errors = map[string]string{}
			}
			smp.Errors[f] = err.Error()
			continue
		}
		smp.Files[f] = string(b)
	}
	return smp, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
