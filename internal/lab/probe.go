package lab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"redline/internal/atomicfile"
	"redline/internal/host"
	"redline/internal/labdata"
	"redline/internal/profile"
)

// What the lab samples on the server host during each run: the /proc
// breakdown (always: two snapshots a run, nothing in between) and, with
// profile: true, a perf profile of one repetition of each variant and
// test. The engine is internal/profile; this file decides when, and keeps
// what it returns.

// topFunctions is how many functions of each side (user, kernel) a run's
// profile keeps in result.json, and how many moves against the baseline.
const topFunctions = 15

// proc returns an fs.FS rooted at the server host's /proc as of the call,
// or nil, nil when the lab cannot read it. Managed and netns servers run
// on this host; an address target's server may be anywhere.
func (t *target) proc(ctx context.Context) (fs.FS, error) {
	if t.host != nil {
		return t.host.Proc(ctx)
	}
	switch t.kind {
	case labdata.KindManaged, labdata.KindNetns, labdata.KindManagedCluster: // a cluster's nodes: the threads of the one in env.ServerPID
		return os.DirFS("/proc"), nil
	}
	return nil, nil
}

// serverHost reads the server host's model once (NICs and their queue
// IRQs, the CPUs' nodes); nil, nil when the lab has none (the breakdowns
// then count no NIC queue interrupts).
func (t *target) serverHost(ctx context.Context) (*host.Snapshot, error) {
	if t.host != nil {
		return t.host.Snapshot(ctx)
	}
	if t.kind != labdata.KindManaged && t.kind != labdata.KindNetns && t.kind != labdata.KindManagedCluster {
		return nil, nil
	}
	hfs, err := host.NewFS("/")
	if err != nil {
		return nil, err
	}
	return host.Read(hfs, host.Options{NoProcesses: true})
}

// sampling is the lab's set-up for the per-run samples.
type sampling struct {
	breakdown  profile.BreakdownOptions // QueueIRQs and NodeOf; PID and FS per run
	profileRep int                      // the repetition profiled (0: none)
	// profiles are the profiled runs' stacks, by Run.Seq, for the diffs
	// against the baseline at the end.
	profiles map[int]*profile.Profile
	profiled map[string]bool // variant + workload already profiled
}

// setupSampling finds the NIC queue IRQs once (internal/host's queue
// matcher) and says in the result what will be sampled.
func (l *labRun) setupSampling(ctx context.Context, q *labdata.Sequential) {
	l.smp = &sampling{profiles: map[int]*profile.Profile{}, profiled: map[string]bool{}}
	info := &labdata.Sampling{Profile: l.s.Profile}
	l.res.Sampling = info
	if l.s.Profile {
		l.smp.profileRep = (q.MinRuns + 1) / 2
		info.ProfileRep = l.smp.profileRep
	}
	if fsys, err := l.tg.proc(ctx); fsys == nil && err == nil {
		info.Breakdown = "not sampled: the server runs elsewhere"
		return
	}
	snap, err := l.tg.serverHost(ctx)
	switch {
	case err != nil:
		info.QueueIRQNote = fmt.Sprintf("NIC queue interrupts not counted: reading the server host: %v", err)
		return
	case snap == nil:
		info.QueueIRQNote = "NIC queue interrupts not counted: no model of the server host"
		return
	}
	l.smp.breakdown.HostQueueIRQs(snap)
	info.QueueIRQs = l.smp.breakdown.QueueIRQs
	info.QueueIRQNote = queueIRQNote(len(info.QueueIRQs), l.res.Target.Topology)
}

// queueIRQNote says what the queue interrupt counts can show here.
func queueIRQNote(n int, topology string) string {
	var why string
	switch {
	case topology == "loopback":
		why = "the load reaches the server over loopback, which raises no NIC interrupt"
	case strings.HasPrefix(topology, "veth"):
		why = "the load reaches the server over a veth pair, which raises no NIC interrupt"
	}
	switch {
	case n == 0 && why != "":
		return "no NIC queue interrupts: " + why + " (and the server host has no NIC queue IRQs)"
	case n == 0:
		return "no NIC queue interrupts: the server host has no NIC queue IRQs"
	case why != "":
		return why + ": the NIC queue interrupts counted are the host's other traffic"
	}
	return ""
}

// runSampler is one run's samples under way.
type runSampler struct {
	l       *labRun
	bo      profile.BreakdownOptions
	before  *profile.Snapshot
	sess    *profile.Session
	sw      *profile.Session // sched_switch of the server, beside sess
	pid     int
	profile *labdata.RunProfile // set when this run is profiled
	dir     string
	title   string
}

// startSampling starts perf when this run is the one profiled for its
// variant and test (first: perf's start-up is then outside the run), then
// takes the breakdown's first snapshot.
func (l *labRun) startSampling(ctx context.Context, variant, workload string, rep int) *runSampler {
	r := &runSampler{l: l}
	if l.smp == nil {
		return r
	}
	if key := variant + "\x00" + workload; l.smp.profileRep == rep && !l.smp.profiled[key] {
		l.smp.profiled[key] = true
		r.startProfile(ctx, variant, workload)
	}
	fsys, err := l.tg.proc(ctx)
	if err != nil || fsys == nil {
		l.samplingFailed(err)
		return r
	}
	r.bo = l.smp.breakdown
	r.bo.FS, r.bo.PID = fsys, l.env.ServerPID
	if r.before, err = profile.ReadSnapshot(r.bo); err != nil {
		l.samplingFailed(err)
	}
	return r
}

// samplingFailed notes the first reason a run has no breakdown.
func (l *labRun) samplingFailed(err error) {
	if err != nil && l.res.Sampling != nil && l.res.Sampling.Breakdown == "" {
		l.res.Sampling.Breakdown = "some runs not sampled: " + err.Error()
	}
}

func (r *runSampler) startProfile(ctx context.Context, variant, workload string) {
	r.profile = &labdata.RunProfile{}
	pid := r.l.localServerPID()
	if pid == 0 {
		r.profile.Error = "not profiled: the server runs elsewhere"
		return
	}
	r.title = variant + ": " + workload
	if base := r.l.resultDir(); base != "" {
		r.profile.Dir = filepath.Join("profiles", fileSafe(variant+"-"+workload))
		r.dir = filepath.Join(base, r.profile.Dir)
		if err := os.MkdirAll(r.dir, 0o755); err != nil {
			r.fail(err)
			return
		}
	}
	// The two perf processes start and attach side by side: each takes
	// seconds on a loaded machine.
	type started struct {
		s   *profile.Session
		err error
	}
	swc := make(chan started, 1)
	go func() {
		s, err := profile.StartSwitches(ctx, profile.RecordOptions{PID: pid})
		swc <- started{s, err}
	}()
	sess, err := profile.Start(ctx, profile.RecordOptions{PID: pid})
	sw := <-swc
	if err != nil {
		if sw.s != nil {
			sw.s.Abort()
		}
		r.fail(err)
		return
	}
	r.sess, r.sw, r.pid = sess, sw.s, pid
	if sw.err != nil {
		r.profile.SwitchError = sw.err.Error()
	}
	r.l.event(Event{Message: "profiling the server during this run (perf record)"})
}

// fail records why the run has no profile; the run itself goes on.
func (r *runSampler) fail(err error) {
	r.profile.Error, r.profile.Dir, r.dir = "not profiled: "+err.Error(), "", ""
}

// stop takes the breakdown's second snapshot, then ends and reads the
// profile. The profile's stacks are kept (by seq) for the diffs.
func (r *runSampler) stop(ctx context.Context, seq int) (*labdata.Breakdown, *labdata.RunProfile) {
	var bd *labdata.Breakdown
	if r.before != nil {
		fsys, err := r.l.tg.proc(context.WithoutCancel(ctx))
		if err == nil && fsys != nil {
			r.bo.FS = fsys
			var after *profile.Snapshot
			if after, err = profile.ReadSnapshot(r.bo); err == nil {
				bd = profile.Compare(r.before, after, r.bo.PID)
			}
		}
		r.l.samplingFailed(err)
	}
	if ctx.Err() != nil && r.sess != nil { // stopped: no minute of perf script after Ctrl-C
		r.sess.Abort()
		if r.sw != nil {
			r.sw.Abort()
		}
		r.fail(errors.New("the lab was interrupted"))
		return bd, r.profile
	}
	if r.sess != nil {
		r.l.event(Event{Message: "reading the CPU profile of " + r.title})
	}
	if r.sw != nil {
		r.readSwitches(ctx)
	}
	if r.sess != nil {
		p, err := r.readProfile(ctx)
		if err != nil {
			r.fail(err)
		} else if seq > 0 {
			r.l.smp.profiles[seq] = p
		}
	}
	return bd, r.profile
}

// readSwitches ends the sched_switch recording and keeps who took the
// main thread's CPU while it was runnable.
func (r *runSampler) readSwitches(ctx context.Context) {
	data, err := r.sw.Stop()
	if err == nil {
		r.profile.Preempted, err = data.Preemptions(context.WithoutCancel(ctx), r.pid)
	}
	if err != nil {
		r.profile.SwitchError = err.Error()
	}
}

// readProfile ends perf, symbolizes, and writes folded.txt and flame.svg.
func (r *runSampler) readProfile(ctx context.Context) (*profile.Profile, error) {
	data, err := r.sess.Stop()
	if err != nil {
		return nil, err
	}
	rec, err := data.Read(context.WithoutCancel(ctx))
	if err != nil {
		return nil, err
	}
	p := rec.Profile
	r.profile.Samples = p.Samples()
	r.profile.Top = profile.TopOf(rec, topFunctions)
	if r.dir == "" {
		return p, nil
	}
	var folded, flame bytes.Buffer
	if err := p.WriteFolded(&folded); err != nil {
		return nil, err
	}
	if err := profile.WriteFlameSVG(&flame, p, profile.FlameOptions{Title: r.title}); err != nil {
		return nil, err
	}
	for name, b := range map[string][]byte{"folded.txt": folded.Bytes(), "flame.svg": flame.Bytes()} {
		if err := atomicfile.Write(filepath.Join(r.dir, name), b, 0o644); err != nil {
			return nil, err
		}
	}
	r.profile.Folded, r.profile.Flame = "folded.txt", "flame.svg"
	return p, nil
}

// diffProfiles compares every profiled run with the baseline's profiled
// run of the same workload: the functions whose share moved most, and a
// differential flame graph beside the run's own.
func (l *labRun) diffProfiles() {
	if l.smp == nil || len(l.smp.profiles) == 0 {
		return
	}
	base := map[string]int{} // workload -> the baseline's profiled seq
	for _, r := range l.res.Runs {
		if l.smp.profiles[r.Seq] != nil && l.isBaseline(r.Variant) {
			base[r.Workload] = r.Seq
		}
	}
	for i := range l.res.Runs {
		r := &l.res.Runs[i]
		b, ok := base[r.Workload]
		p := l.smp.profiles[r.Seq]
		if !ok || p == nil || l.isBaseline(r.Variant) {
			continue
		}
		bp := l.smp.profiles[b]
		r.Profile.BaseSeq, r.Profile.Moves = b, profile.Diff(bp, p, topFunctions)
		if r.Profile.Dir == "" {
			continue
		}
		var svg bytes.Buffer
		title := fmt.Sprintf("%s against the baseline: %s", r.Variant, r.Workload)
		if profile.WriteDiffFlameSVG(&svg, bp, p, profile.FlameOptions{Title: title}) == nil &&
			atomicfile.Write(filepath.Join(l.resultDir(), r.Profile.Dir, "diff.svg"), svg.Bytes(), 0o644) == nil {
			r.Profile.DiffFlame = "diff.svg"
		}
	}
}

func (l *labRun) isBaseline(variant string) bool {
	for _, v := range l.s.Variants {
		if v.Name == variant {
			return v.Baseline
		}
	}
	return false
}

// resultDir is where result.json goes ("" when it is kept in memory).
func (l *labRun) resultDir() string {
	if l.o.ResultPath == "" {
		return ""
	}
	return filepath.Dir(l.o.ResultPath)
}

// fileSafe turns a variant and workload name into a directory name.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.', r == '=':
			return r
		}
		return '_'
	}, s)
}
