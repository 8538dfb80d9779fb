package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"redline/internal/doctor"
	_ "redline/internal/doctor/rules" // registers the rules
	"redline/internal/host"
	"redline/internal/labdata"
	"redline/internal/redisadmin"
	"redline/internal/redisserver"
	"redline/internal/steer"
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
	OpTuneVerify:   (*session).tuneVerify,
	OpRedisStart:   (*session).redisStart,
	OpRedisStop:    (*session).redisStop,
	OpRedisAttach:  (*session).redisAttach,
	OpSample:       (*session).sample,
	OpSteerStart:   (*session).steerStart,
	OpSteerStop:    (*session).steerStop,
	OpBye:          func(*session, context.Context, json.RawMessage) (any, error) { return struct{}{}, nil },
	OpBenchClock:   (*session).benchClock,
	OpBenchStart:   (*session).benchStart,
	OpBenchStop:    (*session).benchStop,
}

// asyncOpFunc checks an operation's arguments and starts it; the reply is
// what wait returns, sent when it returns.
type asyncOpFunc func(s *session, ctx context.Context, args json.RawMessage) (wait func() (any, error), err error)

// asyncOps are the operations whose reply waits for something that takes
// as long as a benchmark.
var asyncOps = map[string]asyncOpFunc{
	OpBenchPrepare: (*session).benchPrepare,
	OpBenchResult:  (*session).benchResult,
}

// opProtocol is the protocol version that added an operation, when later
// than the first.
var opProtocol = map[string]int{
	OpBenchClock: 3, OpBenchPrepare: 3, OpBenchStart: 3, OpBenchResult: 3, OpBenchStop: 3,
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

func (s *session) hello(_ context.Context, raw json.RawMessage) (any, error) {
	var a HelloArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	p, err := negotiate(a.MinProtocol, a.Protocol)
	if err != nil {
		return nil, fmt.Errorf("%w (redline %s)", err, s.o.Version)
	}
	s.proto = p
	if a.HeartbeatTimeout != 0 {
		s.timeout = min(max(a.HeartbeatTimeout, MinHeartbeatTimeout), MaxHeartbeatTimeout)
	}
	hn, _ := os.Hostname()
	return HelloResult{Protocol: p, Session: s.id, SSHServerIP: sshServerIP(os.Getenv("SSH_CONNECTION")), Version: s.o.Version,
		Hostname: hn, UID: os.Getuid(), StateDir: s.o.StateDir, HeartbeatTimeout: s.timeout, Cleanups: s.takeCleanups()}, nil
}

// negotiate picks the newest protocol version in both ranges; lo zero is
// a version 1 client's "exactly hi".
func negotiate(lo, hi int) (int, error) {
	if lo == 0 {
		lo = hi
	}
	p := min(hi, ProtocolVersion)
	if p < max(lo, MinProtocolVersion) || lo > hi {
		return 0, fmt.Errorf("protocol %d..%d: this session speaks %d..%d", lo, hi, MinProtocolVersion, ProtocolVersion)
	}
	return p, nil
}

// sshServerIP is the server address of $SSH_CONNECTION ("client_ip
// client_port server_ip server_port"), or "" outside ssh.
func sshServerIP(conn string) string {
	f := strings.Fields(conn)
	if len(f) != 4 || net.ParseIP(f[2]) == nil {
		return ""
	}
	return f[2]
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
	// Only redis-servers: a root session would otherwise hand out any
	// process's command line, memory map and cgroup.
	for _, pid := range a.PIDs {
		if err := checkRedisProcess(pid); err != nil {
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
		Host: host.Options{IRQPatterns: a.IRQPatterns}, Cluster: a.Cluster}
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

func (s *session) tuneVerify(ctx context.Context, raw json.RawMessage) (any, error) {
	if s.proto < 2 {
		return nil, fmt.Errorf("tune.verify needs protocol 2, this session speaks %d", s.proto)
	}
	a, p, err := planArgs(raw)
	if err != nil {
		return nil, err
	}
	sys := s.system(a.Redis)
	defer sys.Close()
	outs, err := tune.Verify(ctx, sys, p)
	if err != nil {
		return nil, err
	}
	return TuneVerifyResult{Outcomes: outs}, nil
}

func (s *session) tuneApply(ctx context.Context, raw json.RawMessage) (any, error) {
	a, p, err := planArgs(raw)
	if err != nil {
		return nil, err
	}
	if a.Scoped && s.hold == nil {
		h, err := tune.HoldStateDir(s.o.StateDir, "a lab's redline session "+s.id)
		if err != nil {
			return nil, err
		}
		s.hold = h
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
	spec := labdata.ServerSpec{Binary: orDefault(a.Binary, s.o.RedisBinary), Config: a.Config, Allocator: a.Allocator, CPUs: a.CPUs, NUMANode: a.NUMANode}
	o, err := redisserver.SpecOptions(spec)
	if err != nil {
		return nil, err
	}
	o.Bind, o.Port = a.Bind, a.Port
	if a.Password != "" {
		o.Config = append(o.Config, "requirepass "+strconv.Quote(a.Password))
	}
	srv, err := redisserver.Start(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := redisserver.CheckAllocator(srv.Pid(), spec); err != nil {
		srv.Stop()
		return nil, err
	}
	s.nextSrv++
	info := RedisServer{ID: "srv" + strconv.Itoa(s.nextSrv), Host: srv.Host, Port: srv.Port, Pid: srv.Pid(), Dir: srv.Dir, LogPath: srv.LogPath}
	s.servers[info.ID] = &managed{info: info, srv: srv}
	return info, nil
}

// redisAttach finds an existing server's pid through its own INFO and
// checks that the pid is a redis-server process here, before sampling it.
func (s *session) redisAttach(ctx context.Context, raw json.RawMessage) (any, error) {
	if s.proto < 2 {
		return nil, fmt.Errorf("redis.attach needs protocol 2, this session speaks %d", s.proto)
	}
	var a RedisAttachArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if err := validateRedisTarget(&a.Redis); err != nil {
		return nil, err
	}
	r := a.Redis
	c, err := redisadmin.Dial(ctx, redisadmin.Options{Network: r.Network, Addr: r.Addr, Username: r.User, Password: r.Password, Timeout: redisadmin.DefaultTimeout})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	info, err := c.Info(ctx, "server")
	if err != nil {
		return nil, fmt.Errorf("Redis at %s: %w", r.Addr, err)
	}
	pid, ok := info.ProcessID()
	if !ok {
		return nil, fmt.Errorf("Redis at %s: INFO has no process_id", r.Addr)
	}
	if err := checkRedisProcess(pid); err != nil {
		return nil, fmt.Errorf("Redis at %s: %w", r.Addr, err)
	}
	if !slices.Contains(s.attached, pid) {
		s.attached = append(s.attached, pid)
	}
	return RedisAttached{Pid: pid, Version: info.Version()}, nil
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
	for _, f := range SampledFiles {
		smp.read(f, true)
	}
	for _, pid := range s.sampledPIDs() {
		smp.read(fmt.Sprintf("/proc/%d/stat", pid), true)
		if s.proto >= 2 {
			smp.PIDs = append(smp.PIDs, pid)
			smp.readTasks(pid)
		}
	}
	return smp, nil
}

// sampledPIDs are the started servers' pids, then the attached ones.
func (s *session) sampledPIDs() []int {
	var pids []int
	for _, id := range sortedKeys(s.servers) {
		pids = append(pids, s.servers[id].info.Pid)
	}
	return append(pids, s.attached...)
}

// read adds one file; a failure is recorded when must (a file every
// kernel has), else the file is just left out.
func (smp *Sample) read(name string, must bool) {
	b, err := os.ReadFile(name)
	if err == nil {
		smp.Files[name] = string(b)
		return
	}
	if must {
		if smp.Errors == nil {
			smp.Errors = map[string]string{}
		}
		smp.Errors[name] = err.Error()
	}
}

// readTasks adds TaskFiles of every thread of pid; threads come and go
// between the listing and the reads.
func (smp *Sample) readTasks(pid int) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		smp.read(dir, true) // records why
		return
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		for _, f := range TaskFiles {
			smp.read(dir+"/"+e.Name()+"/"+f, false)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// steerStart starts steer for one of the session's servers, its moves
// journaled in the session's state directory. Steering writes IRQ
// affinities, so it takes the state directory as a lab's apply does.
func (s *session) steerStart(ctx context.Context, raw json.RawMessage) (any, error) {
	var a SteerStartArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if !s.ownsServer(a.Pid) {
		return nil, fmt.Errorf("steer: process %d is not a redis-server this session started or attached", a.Pid)
	}
	if len(s.steers) > 0 {
		// Two steers would move the same IRQs, each journaling the other's
		// value as the one to restore.
		return nil, fmt.Errorf("steer: %s already runs in this session: stop it first", sortedKeys(s.steers)[0])
	}
	var bad []string
	a.Spec.Check(func(field, format string, args ...any) {
		bad = append(bad, "steer."+field+": "+fmt.Sprintf(format, args...))
	})
	if len(bad) > 0 {
		return nil, errors.New(strings.Join(bad, "; "))
	}
	if !a.Spec.DryRun && s.hold == nil {
		h, err := tune.HoldStateDir(s.o.StateDir, "a lab's redline session "+s.id)
		if err != nil {
			return nil, err
		}
		s.hold = h
	}
	st, err := steer.StartSession(ctx, steer.SessionOptions{
		Period: a.Spec.Period, Sample: a.Spec.Sample, Domain: a.Spec.Domain, PIDs: []int{a.Pid}, DryRun: a.Spec.DryRun,
		StateDir: s.o.StateDir,
		Engine:   steer.Options{Periods: a.Spec.Periods, Majority: float64(a.Spec.Majority), MinPackets: a.Spec.MinPackets},
	})
	if err != nil {
		return nil, err
	}
	if s.steers == nil {
		s.steers = map[string]*steer.Session{}
	}
	s.nextSteer++
	id := "steer-" + strconv.Itoa(s.nextSteer)
	s.steers[id] = st
	s.logf("steer %s started for process %d", id, a.Pid)
	return SteerStarted{ID: id}, nil
}

// steerStop stops a steer, restoring every IRQ it moved.
func (s *session) steerStop(ctx context.Context, raw json.RawMessage) (any, error) {
	var a SteerStopArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	st, ok := s.steers[a.ID]
	if !ok {
		return nil, fmt.Errorf("no steer %q started by this session", a.ID)
	}
	delete(s.steers, a.ID)
	rec, err := st.Stop(ctx)
	out := SteerStopResult{Session: rec.Data()}
	if err != nil {
		out.Error = err.Error()
	}
	return out, nil
}

// ownsServer says whether pid is a server the session started or attached.
func (s *session) ownsServer(pid int) bool {
	for _, m := range s.servers {
		if m.info.Pid == pid && pid > 0 {
			return true
		}
	}
	return pid > 0 && slices.Contains(s.attached, pid)
}
