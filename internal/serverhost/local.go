package serverhost

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"redline/internal/change"
	"redline/internal/doctor"
	_ "redline/internal/doctor/rules" // registers the rules
	"redline/internal/host"
	"redline/internal/netns"
	"redline/internal/redisadmin"
	"redline/internal/redisserver"
	"redline/internal/remote"
	"redline/internal/steer"
	"redline/internal/steerspec"
	"redline/internal/tune"
)

// LocalOptions configure the host this process runs on.
type LocalOptions struct {
	// Root is the host's root directory: "/" (or "") for this machine, or
	// a fixture tree, which is read (and tune rehearses on) instead.
	Root string
	// Proc and Sys are where /proc and /sys are when not below Root.
	Proc, Sys string
	// NetNS is the server's network namespace ("" for this process's):
	// the snapshot and the doctor read the host from inside it, tune
	// writes its net.* sysctls and dials Redis there, journaling it, and
	// RedisAttach dials the server there.
	NetNS string
	// ClientNetNS is the load's network namespace on this machine ("" for
	// none of its own): steer counts the packets of its devices too, as
	// it does NetNS's.
	ClientNetNS string
	// Record keeps every file a Snapshot reads (Recorded), for inspect's
	// --capture.
	Record bool
	// StateDir holds the tune journal; tune.DefaultStateDir when empty.
	StateDir string
	// StateDirMustExist is set when the user named StateDir for reading
	// its journal (tune rollback, status, verify): Open then refuses one
	// that does not exist (ErrNoStateDir), a mistyped directory rather
	// than "nothing applied". Either way, reading never makes one.
	StateDirMustExist bool
	// System makes the machine tune works on; from Root when nil.
	System func() *tune.System
	// RedisBinary is the redis-server RedisStart runs when the request
	// names none; from PATH when empty.
	RedisBinary string
	// Holder names who holds the state directory from Hold, or the first
	// scoped apply or steer, on (a second lab refuses meanwhile).
	Holder string
	// Log, when set, is told what the host starts and stops.
	Log func(format string, args ...any)
	// BuildCache is where Build builds (redisbuild.DefaultCache when
	// empty; a session always uses that); BuildProgress gets its steps.
	BuildCache    string
	BuildProgress io.Writer
}

// Local is the Host this process runs on. It keeps the ledger of what its
// operations started (scoped applies, servers, attached servers, steers),
// which Close undoes.
type Local struct {
	o LocalOptions
	*ledger
}

// ledger is what a Local started and holds, shared by its InNetNS views.
type ledger struct {
	mu       sync.Mutex
	scoped   []string          // tune sessions to roll back at the end, oldest first
	password map[string]string // Redis password per scoped tune session
	servers  map[string]*managed
	nextSrv  int
	attached []int // existing servers' pids, sampled, never stopped
	// hold keeps the state directory from Hold or the first scoped apply
	// or steer (a lab's) to the end, so a second lab on this host refuses
	// instead of interleaving its changes with this one's in the journal.
	hold      *tune.Hold
	steers    map[string]*steering
	nextSteer int
	recorded  *host.FS // the last Snapshot's, with Record
}

type managed struct {
	info remote.RedisServer
	srv  *redisserver.Server
}

type steering struct {
	s   *steer.Session
	pid int
}

// NewLocal opens this machine (or the tree at o.Root) as a Host.
func NewLocal(o LocalOptions) *Local {
	if o.StateDir == "" {
		o.StateDir = tune.DefaultStateDir
	}
	if o.Root == "" {
		o.Root = "/"
	}
	return &Local{o: o, ledger: &ledger{password: map[string]string{}, servers: map[string]*managed{}, steers: map[string]*steering{}}}
}

// InNetNS is this host, with its one ledger and its hold, seen from the
// network namespace server (LocalOptions.NetNS), its load coming from
// client (LocalOptions.ClientNetNS): a lab's namespaces, known only once
// its target runs.
func (l *Local) InNetNS(server, client string) *Local {
	o := l.o
	o.NetNS, o.ClientNetNS = server, client
	return &Local{o: o, ledger: l.ledger}
}

func (l *Local) logf(format string, args ...any) {
	if l.o.Log != nil {
		l.o.Log(format, args...)
	}
}

// Info names this machine.
func (l *Local) Info() Info {
	hn, _ := os.Hostname()
	return Info{Hostname: hn, UID: os.Geteuid()}
}

// FS is the host's file system as its reads see it (record: keep what is
// read, for inspect --capture).
func (l *Local) FS(record bool) (*host.FS, error) {
	return host.NewFSWith(host.FSOptions{Root: l.o.Root, Proc: l.o.Proc, Sys: l.o.Sys, Record: record})
}

// Snapshot reads the host's model (from inside NetNS). From another
// network namespace of the live host, /sys is a sysfs of that namespace
// (netns.DoWithSysfs), so its NICs are the ones netlink answers for; where
// none can be mounted the NICs are left out, marked not checked.
func (l *Local) Snapshot(_ context.Context, a SnapshotArgs) (*host.Snapshot, error) {
	var snap *host.Snapshot
	read := func(sysErr error) error {
		fs, err := l.FS(l.o.Record)
		if err != nil {
			return err
		}
		if l.o.Record {
			l.mu.Lock()
			l.recorded = fs
			l.mu.Unlock()
		}
		snap, err = ReadSnapshot(fs, a)
		if err == nil && sysErr != nil {
			host.NICsNotChecked(snap, nicsNotChecked(l.o.NetNS, sysErr))
		}
		return err
	}
	var err error
	if l.live() {
		err = netns.DoWithSysfs(l.o.NetNS, read)
	} else {
		err = netns.Do(l.o.NetNS, func() error { return read(nil) })
	}
	return snap, err
}

// Recorded is the file system the last Snapshot read, holding what it
// read (LocalOptions.Record), for host.Capture.
func (l *Local) Recorded() *host.FS {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.recorded
}

// ReadSnapshot reads the model from fs as a asks (6379 and the other
// default ports always counted).
func ReadSnapshot(fs *host.FS, a SnapshotArgs) (*host.Snapshot, error) {
	ports := append(append([]int{}, host.DefaultPorts...), a.Ports...)
	return host.Read(fs, host.Options{PIDs: a.PIDs, IRQPatterns: a.IRQPatterns, Ports: ports, NoProcesses: a.NoProcesses})
}

// Doctor runs the rules (doctor.Diagnose: the cluster and the host-only
// fallback are the doctor's).
func (l *Local) Doctor(ctx context.Context, a DoctorArgs) (*doctor.Report, error) {
	o := doctor.DiagnoseOptions{
		Gather: doctor.GatherOptions{Root: l.o.Root, Pid: a.Pid, Sample: a.Sample, Iface: a.Iface, ExpectedClients: a.Clients,
			Host: host.Options{IRQPatterns: a.IRQPatterns}, Cluster: a.Cluster, ClusterAuthAny: a.ClusterAuthAny},
		Rules:            doctor.Options{Only: a.Only, Skip: a.Skip},
		HostOnlyFallback: a.HostOnlyFallback,
		Intrinsic:        a.Intrinsic,
	}
	if r := a.Redis; r != nil {
		o.Gather.Redis = &redisadmin.Options{Network: r.Network, Addr: r.Addr, Username: r.User, Password: r.Password,
			Timeout: cmp.Or(a.Timeout, redisadmin.DefaultTimeout)}
	}
	var rep *doctor.Report
	diagnose := func(sysErr error) (err error) {
		if sysErr != nil {
			o.Gather.NICsNotChecked = nicsNotChecked(l.o.NetNS, sysErr)
		}
		rep, err = doctor.Diagnose(ctx, o)
		return err
	}
	var err error
	if l.live() {
		err = netns.DoWithSysfs(l.o.NetNS, diagnose)
	} else {
		err = netns.Do(l.o.NetNS, func() error { return diagnose(nil) })
	}
	return rep, err
}

// live reports whether l reads this machine's own /proc and /sys (not a
// fixture tree): only then is a network namespace's sysfs mounted.
func (l *Local) live() bool { return (l.o.Root == "" || l.o.Root == "/") && l.o.Sys == "" }

// nicsNotChecked says why a namespace's NICs were not read.
func nicsNotChecked(ns string, sysErr error) string {
	return fmt.Sprintf("not checked: /sys lists this host's network interfaces, not network namespace %s's, and a sysfs of that namespace could not be mounted (%v)", ns, sysErr)
}

// System is the machine tune works on, with redis as its server.
func (l *Local) System(redis *RedisTarget) *tune.System {
	var sys *tune.System
	switch {
	case l.o.System != nil:
		sys = l.o.System()
	case l.o.Root == "/":
		sys = tune.LiveSystem()
	default:
		sys = tune.RehearsalSystem(l.o.Root)
	}
	sys.NetNS = l.o.NetNS
	if redis != nil {
		sys.Redis = tune.RedisOptions{Network: redis.Network, Addr: redis.Addr, User: redis.User, Password: redis.Password}
	}
	return sys
}

// TunePreview says what applying p would do.
func (l *Local) TunePreview(ctx context.Context, p *tune.Plan, redis *RedisTarget) ([]tune.Outcome, []string, error) {
	sys := l.System(redis)
	defer sys.Close()
	outs, err := tune.Preview(ctx, sys, p)
	if err != nil {
		return nil, nil, err
	}
	return outs, tune.Warnings(sys, p), nil
}

// TuneVerify compares p's values with the live ones.
func (l *Local) TuneVerify(ctx context.Context, p *tune.Plan, redis *RedisTarget) ([]tune.Outcome, error) {
	sys := l.System(redis)
	defer sys.Close()
	return tune.Verify(ctx, sys, p)
}

// TuneApply applies p behind the journal; a scoped apply is the ledger's
// until TuneKeep or Close.
func (l *Local) TuneApply(ctx context.Context, p *tune.Plan, redis *RedisTarget, scope Scope) (*tune.ApplyResult, error) {
	scoped := scope == Scoped
	if scoped {
		if err := l.Hold(); err != nil {
			return nil, err
		}
	}
	sys := l.System(redis)
	defer sys.Close()
	res, err := tune.Apply(ctx, sys, p, tune.ApplyOptions{StateDir: l.o.StateDir})
	if res != nil && res.Session != "" && scoped {
		l.mu.Lock()
		l.scoped = append(l.scoped, res.Session)
		l.password[res.Session] = sys.Redis.Password
		l.mu.Unlock()
	}
	return res, err
}

// Hold takes the state directory for the rest of the Host's life (until
// Close), for Holder: a second lab tuning this host then refuses. A scoped
// apply or a steer takes it by itself; a lab that tunes this machine takes
// it before it starts anything.
func (l *Local) Hold() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.hold != nil {
		return nil
	}
	h, err := tune.HoldStateDir(l.o.StateDir, cmp.Or(l.o.Holder, "a lab's redline"))
	if err != nil {
		return err
	}
	l.hold = h
	return nil
}

// StartNetNS gives a network namespace this host made for a lab (its
// netns target) its starting net.* sysctls, journaled in the state
// directory with the namespace (tune.StartNetNS); undo rolls them back
// before the namespace goes.
func (l *Local) StartNetNS(ctx context.Context, ns string, sysctls map[string]string) ([]tune.Outcome, func(context.Context) error, error) {
	return tune.StartNetNS(ctx, ns, sysctls, l.o.StateDir)
}

// holds says whether this Host holds the state directory already.
func (l *Local) holds() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hold != nil
}

// TuneKeep makes a scoped apply permanent.
func (l *Local) TuneKeep(_ context.Context, id string) error {
	if id == "" {
		return errors.New("keep: which session?")
	}
	l.forgetScoped(id, false)
	return nil
}

// TuneRollback rolls back journaled changes; a state directory that does
// not exist has none (and is not made). An exclusive one (a user's)
// refuses while another redline holds the state directory: rolling back
// under a running autotune or lab would undo its trial mid-measurement.
func (l *Local) TuneRollback(ctx context.Context, a TuneRollbackArgs) (*tune.RollbackResult, error) {
	if _, err := os.Stat(l.o.StateDir); errors.Is(err, fs.ErrNotExist) {
		return &tune.RollbackResult{Outcomes: []tune.Outcome{}}, nil
	}
	if a.Exclusive && !a.DryRun && !l.holds() {
		h, err := tune.HoldStateDir(l.o.StateDir, "redline tune rollback")
		if err != nil {
			return nil, err
		}
		defer h.Release()
	}
	res, err := tune.Rollback(ctx, tune.RollbackOptions{StateDir: l.o.StateDir, Session: a.Session, Last: a.Last, DryRun: a.DryRun, RedisPassword: a.RedisPassword})
	if res != nil && !a.DryRun && err == nil {
		l.forgetScoped(a.Session, a.Last)
	}
	return res, err
}

// forgetScoped drops scoped applies the client rolled back itself.
func (l *Local) forgetScoped(id string, last bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case id != "":
		if i := slices.Index(l.scoped, id); i >= 0 {
			l.scoped = slices.Delete(l.scoped, i, i+1)
		}
	case last && len(l.scoped) > 0:
		l.scoped = l.scoped[:len(l.scoped)-1]
	case !last:
		l.scoped = nil
	}
}

// TuneStatus says where the journaled changes stand.
func (l *Local) TuneStatus(ctx context.Context, redisPassword string) (*tune.StatusReport, error) {
	return tune.Journaled(ctx, tune.StatusOptions{StateDir: l.o.StateDir, RedisPassword: redisPassword})
}

// RedisStart starts a managed server.
func (l *Local) RedisStart(ctx context.Context, a RedisStartArgs) (remote.RedisServer, error) {
	spec := redisserver.Spec{Binary: cmp.Or(a.Binary, l.o.RedisBinary), Config: a.Config, Allocator: a.Allocator, CPUs: a.CPUs, NUMANode: a.NUMANode}
	o, err := redisserver.SpecOptions(spec)
	if err != nil {
		return remote.RedisServer{}, err
	}
	o.Bind, o.Port, o.NetNS = a.Bind, a.Port, l.o.NetNS
	if a.Password != "" {
		o.Config = append(o.Config, "requirepass "+strconv.Quote(a.Password))
	}
	srv, err := redisserver.Start(ctx, o)
	if err != nil {
		return remote.RedisServer{}, err
	}
	if err := redisserver.CheckAllocator(srv.Pid(), spec); err != nil {
		srv.Stop()
		return remote.RedisServer{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nextSrv++
	info := remote.RedisServer{ID: "srv" + strconv.Itoa(l.nextSrv), Host: srv.Host, Port: srv.Port, Pid: srv.Pid(), Dir: srv.Dir, LogPath: srv.LogPath}
	l.servers[info.ID] = &managed{info: info, srv: srv}
	return info, nil
}

// RedisStop stops a server RedisStart started, and first a steer running
// for it (it would go on moving IRQs for a process that is gone).
func (l *Local) RedisStop(ctx context.Context, id string) (string, error) {
	l.mu.Lock()
	m, ok := l.servers[id]
	delete(l.servers, id)
	var stops []string
	for sid, st := range l.steers {
		if m != nil && st.pid == m.info.Pid {
			stops = append(stops, sid)
		}
	}
	l.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("no server %q started here", id)
	}
	var errs []error
	for _, sid := range stops {
		if _, err := l.SteerStop(ctx, sid); err != nil {
			errs = append(errs, fmt.Errorf("steer %s: %w", sid, err))
		}
	}
	tail := m.srv.LogTail(20)
	if err := m.srv.Stop(); err != nil {
		errs = append(errs, err)
	}
	return tail, errors.Join(errs...)
}

// RedisAttach finds an existing server's pid through its own INFO and
// checks that the pid is a redis-server process here, before sampling it.
func (l *Local) RedisAttach(ctx context.Context, r RedisTarget) (RedisAttached, error) {
	var info *redisadmin.Info
	err := netns.Do(l.o.NetNS, func() error {
		c, err := redisadmin.Dial(ctx, redisadmin.Options{Network: r.Network, Addr: r.Addr, Username: r.User, Password: r.Password, Timeout: redisadmin.DefaultTimeout})
		if err != nil {
			return err
		}
		defer c.Close()
		if info, err = c.Info(ctx, "server"); err != nil {
			return fmt.Errorf("Redis at %s: %w", r.Addr, err)
		}
		return nil
	})
	if err != nil {
		return RedisAttached{}, err
	}
	pid, ok := info.ProcessID()
	if !ok {
		return RedisAttached{}, fmt.Errorf("Redis at %s: INFO has no process_id", r.Addr)
	}
	if err := checkRedisProcess(pid); err != nil {
		return RedisAttached{}, fmt.Errorf("Redis at %s: %w", r.Addr, err)
	}
	l.mu.Lock()
	if !slices.Contains(l.attached, pid) {
		l.attached = append(l.attached, pid)
	}
	l.mu.Unlock()
	return RedisAttached{Pid: pid, Version: info.Version()}, nil
}

// RedisNodes lists a cluster's nodes (tune.ClusterNodes).
func (l *Local) RedisNodes(ctx context.Context, r RedisTarget) ([]string, error) {
	var nodes []string
	err := netns.Do(l.o.NetNS, func() (err error) {
		nodes, err = tune.ClusterNodes(ctx, tune.RedisOptions{Network: r.Network, Addr: r.Addr, User: r.User, Password: r.Password})
		return err
	})
	return nodes, err
}

// owns says whether pid is a server this Host started or attached.
func (l *Local) owns(pid int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if pid <= 0 {
		return false
	}
	for _, m := range l.servers {
		if m.info.Pid == pid {
			return true
		}
	}
	return slices.Contains(l.attached, pid)
}

// Sample reads the counters now.
func (l *Local) Sample(context.Context) (fs.FS, error) {
	smp := l.sample()
	return smp.ProcFS(), nil
}

func (l *Local) sample() *Sample {
	smp := &Sample{Time: time.Now().UTC(), Files: map[string]string{}}
	for _, f := range SampledFiles {
		smp.read(f, true)
	}
	for _, pid := range l.sampledPIDs() {
		smp.read(fmt.Sprintf("/proc/%d/stat", pid), true)
		smp.PIDs = append(smp.PIDs, pid)
		smp.readTasks(pid)
	}
	return smp
}

// sampledPIDs are the started servers' pids, then the attached ones.
func (l *Local) sampledPIDs() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	var pids []int
	for _, id := range sortedKeys(l.servers) {
		pids = append(pids, l.servers[id].info.Pid)
	}
	return append(pids, l.attached...)
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

// SteerStart starts steer (steer.StartSpec) for one of this Host's
// servers, its moves journaled in the state directory, which it holds as
// a lab's apply does. One steer at a time: two would move the same IRQs,
// each journaling the other's value as the one to restore.
func (l *Local) SteerStart(ctx context.Context, spec steerspec.Spec, pid int) (string, error) {
	if !l.owns(pid) {
		return "", fmt.Errorf("steer: process %d is not a redis-server started or attached here", pid)
	}
	l.mu.Lock()
	running := sortedKeys(l.steers)
	l.mu.Unlock()
	if len(running) > 0 {
		return "", fmt.Errorf("steer: %s already runs here: stop it first", running[0])
	}
	if !spec.DryRun {
		if err := l.Hold(); err != nil {
			return "", err
		}
	}
	st, err := steer.StartSession(ctx, l.steerOptions(spec, pid))
	if err != nil {
		return "", err
	}
	l.mu.Lock()
	l.nextSteer++
	id := "steer-" + strconv.Itoa(l.nextSteer)
	l.steers[id] = &steering{s: st, pid: pid}
	l.mu.Unlock()
	l.logf("steer %s started for process %d", id, pid)
	return id, nil
}

// SteerStop stops a steer, restoring every IRQ it moved.
func (l *Local) SteerStop(ctx context.Context, id string) (steerspec.Session, error) {
	l.mu.Lock()
	st, ok := l.steers[id]
	delete(l.steers, id)
	l.mu.Unlock()
	if !ok {
		return steerspec.Session{}, fmt.Errorf("no steer %q started here", id)
	}
	rec, err := st.s.Stop(ctx)
	out := SteerData(rec)
	if err != nil {
		out.RestoreError = err.Error()
	}
	return out, err
}

// steerOptions are the session options of a steer variant (spec) for one
// of this Host's servers, counting the packets of the server's and the
// load's namespaces too, its moves journaled in the state directory and
// written through the Host's System (a rehearsal tree's, in tests), never
// the live host behind its back. IRQs are the host's, whichever namespace
// the server is in: the moves journal none.
func (l *Local) steerOptions(spec steerspec.Spec, pid int) steer.SessionOptions {
	var namespaces []string
	for _, ns := range []string{l.o.NetNS, l.o.ClientNetNS} {
		if ns != "" {
			namespaces = append(namespaces, ns)
		}
	}
	return steer.SessionOptions{
		Period: spec.Period, Sample: spec.Sample, Domain: spec.Domain, PIDs: []int{pid}, DryRun: spec.DryRun, StateDir: l.o.StateDir, NetNS: namespaces,
		Engine: steer.Options{Periods: spec.Periods, Majority: float64(spec.Majority), MinPackets: spec.MinPackets},
		System: func() *tune.System {
			sys := l.System(nil)
			sys.NetNS = ""
			return sys
		},
	}
}

// Close undoes the ledger: steers (their moves are journaled sessions of
// their own, restored before the applies under them), then the scoped
// applies newest first, then the servers. The error joins what failed,
// also listed in the cleanup.
func (l *Local) Close(ctx context.Context) (*remote.Cleanup, error) {
	c := &remote.Cleanup{Time: time.Now().UTC()}
	l.End(ctx, c)
	var errs []error
	for _, e := range c.Errors {
		errs = append(errs, errors.New(e))
	}
	return c, errors.Join(errs...)
}

// End is Close recording into c (remote.Handler's End).
func (l *Local) End(ctx context.Context, c *remote.Cleanup) {
	l.mu.Lock()
	steers := sortedKeys(l.steers)
	l.mu.Unlock()
	for _, id := range steers {
		rec, err := l.SteerStop(ctx, id)
		if err != nil {
			c.Errors = append(c.Errors, fmt.Sprintf("steer %s: %v", id, err))
		}
		c.Steered = append(c.Steered, rec)
	}
	l.mu.Lock()
	scoped, servers := l.scoped, l.servers
	l.scoped, l.servers = nil, map[string]*managed{}
	l.mu.Unlock()
	for i := len(scoped) - 1; i >= 0; i-- {
		id := scoped[i]
		res, err := tune.Rollback(ctx, tune.RollbackOptions{StateDir: l.o.StateDir, Session: id, RedisPassword: l.password[id]})
		r := remote.RestoredApply{TuneSession: id}
		if res != nil {
			r.Steps = StepsOf(res.Outcomes)
		}
		if err != nil {
			c.Errors = append(c.Errors, fmt.Sprintf("rollback of %s: %v", id, err))
		}
		c.Restored = append(c.Restored, r)
	}
	for _, id := range sortedKeys(servers) {
		m := servers[id]
		if err := m.srv.Stop(); err != nil {
			c.Errors = append(c.Errors, fmt.Sprintf("stop redis-server %s: %v", id, err))
		}
		c.Stopped = append(c.Stopped, m.info)
	}
	l.mu.Lock()
	l.hold.Release()
	l.hold = nil
	l.mu.Unlock()
}

// StepsOf are tune's outcomes as the lab records them.
func StepsOf(outs []tune.Outcome) []change.Step {
	steps := make([]change.Step, 0, len(outs))
	for _, o := range outs {
		steps = append(steps, change.Step{Change: o.Change, Old: o.Old, Status: string(o.Status), Note: o.Reason})
	}
	return steps
}
