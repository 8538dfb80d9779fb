package steer

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"redline/internal/host"
	"redline/internal/testutil"
	"redline/internal/tune"
)

// The kill -9 loop (TestSteerKillLoop, scripts/steer-kill-loop): a steer
// daemon moves one of this machine's real queue IRQs from CPU to CPU
// through the journal, period after period, and is killed with SIGKILL
// at a random moment while a move is in flight; then a new steer starts
// (it restores what the killed one left before its first move) or tune
// rollback runs, and the IRQ must be back where it was with nothing left
// pending. The daemon is Run with the actuator steer uses, the state
// directory held as the command holds it; only the sampler is replaced by
// a source that sends every period's packets to the other CPU (each CPU
// taken as a domain of its own), so that every period moves the IRQ, and
// the actuator pauses a random while at each crash point, so that a kill
// lands inside a move rather than between two.

const (
	loopEnv     = "REDLINE_STEER_KILL_LOOP" // kills to make (default defaultKills)
	loopSeedEnv = "REDLINE_STEER_KILL_SEED" // repeat a run's random choices
	// loopBinEnv names a redline binary whose `tune rollback` is run
	// (scripts/steer-kill-loop builds one); unset, tune.Rollback in-process.
	loopBinEnv   = "REDLINE_BIN"
	defaultKills = 6
	loopPeriod   = 5 * time.Millisecond
	loopPause    = 10 * time.Millisecond // the most a crash point pauses
	loopKillMax  = 60 * time.Millisecond // the latest kill after a move began
)

// alternating is a Source whose every period's packets of one queue are
// consumed on the next of cpus.
type alternating struct {
	queue QueueKey
	cpus  []int
}

func (a *alternating) Run(ctx context.Context, period time.Duration, out chan<- *Period) error {
	for i := 0; ; i++ {
		cpu := a.cpus[i%len(a.cpus)]
		p := &Period{Queues: map[QueueKey]*QueueCounts{a.queue: {Received: 1000, Matched: 1000, Consumers: map[int]uint64{cpu: 1000}}}}
		select {
		case out <- p:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case <-time.After(period):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (a *alternating) Stats() SamplerStats                          { return SamplerStats{} }
func (a *alternating) Configure(map[uint32]bool, func(string) bool) {}

// cpusAsDomains reads the live host with every CPU a domain of its own.
func cpusAsDomains() (*host.Snapshot, error) {
	fs, err := host.NewFS("/")
	if err != nil {
		return nil, err
	}
	snap, err := host.Read(fs, host.Options{NoProcesses: true})
	if err != nil {
		return nil, err
	}
	for i := range snap.CPU.CPUs {
		n := snap.CPU.CPUs[i].ID
		snap.CPU.CPUs[i].Node = &n
	}
	return snap, nil
}

// daemonChild is one steer of the loop: it holds the state directory,
// restores what an earlier steer left, opens the tracepoints, says so on
// stdout ("recovered:
// ..."), waits for a line on stdin, then steers REDLINE_STEER_IRQ's queue
// until killed, appending each crash point it reaches to
// REDLINE_STEER_POINTS.
func daemonChild() {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "steer child:", err)
		os.Exit(2)
	}
	state := os.Getenv("REDLINE_STEER_STATE")
	hold, err := tune.HoldStateDir(state, "redline steer (kill loop)")
	if err != nil {
		fail(err)
	}
	defer hold.Release()
	ctx := context.Background()
	sys := tune.LiveSystem()
	recovered, err := recoverEarlier(ctx, sys, state)
	if err != nil {
		fail(err)
	}
	// Then the tracepoints, as StartSession opens them before it says
	// what it recovered.
	tfs, err := OpenTracefs()
	if err != nil {
		fail(err)
	}
	defer tfs.Close()
	smp, err := NewSampler(tfs, SamplerOptions{})
	if err != nil {
		fail(err)
	}
	smp.Close()
	fmt.Printf("recovered: %s\n", recovered)
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		os.Exit(0) // the parent is done with it
	}
	irq, _ := strconv.Atoi(os.Getenv("REDLINE_STEER_IRQ"))
	seed, _ := strconv.ParseUint(os.Getenv("REDLINE_STEER_SEED"), 10, 64)
	rng := rand.New(rand.NewPCG(seed, 1))
	points, err := os.OpenFile(os.Getenv("REDLINE_STEER_POINTS"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fail(err)
	}
	act := &TuneActuator{System: sys, StateDir: state, AtCrashPoint: func(seq int, at tune.CrashPoint) {
		fmt.Fprintf(points, "%s %d\n", at, seq)
		time.Sleep(time.Duration(rng.Int64N(int64(loopPause))))
	}}
	snap, err := cpusAsDomains()
	if err != nil {
		fail(err)
	}
	src := &alternating{}
	for _, q := range QueueIRQsOf(snap) {
		if q.IRQ == irq {
			src.queue = q.Queue
		}
	}
	topo, err := TopologyIn(snap, DomainNode)
	if err != nil {
		fail(err)
	}
	for _, c := range topo.CPUs {
		src.cpus = append(src.cpus, c.ID)
	}
	err = Run(ctx, src, Config{
		Period: loopPeriod, Engine: Options{Periods: 1, MinPackets: 10}, Refresh: 1 << 30,
		Read: cpusAsDomains, ReadFile: os.ReadFile, Actuator: act,
		OnPeriod: func(r *Report) {
			for _, s := range r.NotDone {
				fmt.Fprintln(os.Stderr, "steer child:", s)
			}
		},
	})
	fail(err)
}

// loopDaemon is a running daemonChild.
type loopDaemon struct {
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	points    string
	recovered string
}

// loopIRQ is the queue IRQ the loop moves, and where it was.
type loopIRQ struct {
	irq  int
	orig string
}

func (q loopIRQ) path() string { return "/proc/irq/" + strconv.Itoa(q.irq) + "/smp_affinity_list" }

func (q loopIRQ) now(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(q.path())
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// startDaemon starts a steer and waits until it has restored what the
// last one left (it moves nothing before run).
func startDaemon(t *testing.T, state string, q loopIRQ, seed uint64) *loopDaemon {
	t.Helper()
	d := &loopDaemon{points: filepath.Join(t.TempDir(), "points")}
	d.cmd = exec.Command(os.Args[0], "-test.run=^$")
	d.cmd.Env = append(os.Environ(), childEnv+"=daemon", "REDLINE_STEER_STATE="+state, "REDLINE_STEER_IRQ="+strconv.Itoa(q.irq),
		"REDLINE_STEER_SEED="+strconv.FormatUint(seed, 10), "REDLINE_STEER_POINTS="+d.points)
	var stderr strings.Builder
	d.cmd.Stderr = &stderr
	var err error
	if d.stdin, err = d.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := d.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if !strings.HasPrefix(line, "recovered: ") {
		d.kill()
		t.Fatalf("the new steer did not start (%v): %q\n%s", err, line, stderr.String())
	}
	d.recovered = strings.TrimSpace(strings.TrimPrefix(line, "recovered: "))
	return d
}

// run lets the daemon steer.
func (d *loopDaemon) run(t *testing.T) {
	t.Helper()
	if _, err := io.WriteString(d.stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
}

func (d *loopDaemon) kill() {
	d.cmd.Process.Kill()
	d.cmd.Wait()
}

// killInFlight waits until the daemon begins a move, kills it with
// SIGKILL a random while later (at most loopKillMax) and returns the last
// crash point it had reached.
func (d *loopDaemon) killInFlight(t *testing.T, rng *rand.Rand) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if st, err := os.Stat(d.points); err == nil && st.Size() > 0 {
			break
		}
		if time.Now().After(deadline) {
			d.kill()
			t.Fatal("the steer made no move in 2 minutes")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(time.Duration(rng.Int64N(int64(loopKillMax))))
	d.kill()
	b, err := os.ReadFile(d.points)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// loopFigures are what a loop did.
type loopFigures struct {
	kills, leftMoved, pendingLeft, passed int
	points                                map[string]int
	then                                  map[string]int
}

func (f loopFigures) String() string {
	var pts []string
	for _, p := range slices.Sorted(maps.Keys(f.points)) {
		pts = append(pts, fmt.Sprintf("%s %d", p, f.points[p]))
	}
	return fmt.Sprintf("%d kills (%d followed by a new steer, %d by tune rollback), %d crash points passed; killed after: %s; IRQs left moved: %d; changes left pending: %d",
		f.kills, f.then["next steer"], f.then["tune rollback"], f.passed, strings.Join(pts, ", "), f.leftMoved, f.pendingLeft)
}

// TestSteerKillLoop is the kill -9 loop, REDLINE_STEER_KILL_LOOP times
// (default 6); scripts/steer-kill-loop runs it.
func TestSteerKillLoop(t *testing.T) {
	testutil.HostWrites(t)
	kills := defaultKills
	if v := os.Getenv(loopEnv); v != "" {
		var err error
		if kills, err = strconv.Atoi(v); err != nil || kills < 1 {
			t.Fatalf("%s=%q: want a number of kills", loopEnv, v)
		}
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(loopSeedEnv); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (%s=%d repeats the choices)", seed, loopSeedEnv, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	q := pickLoopIRQ(t)
	state := t.TempDir()
	var d *loopDaemon
	t.Cleanup(func() { // steer's own restore first, then the safety net
		if d != nil {
			d.kill()
		}
		tune.Rollback(context.Background(), tune.RollbackOptions{StateDir: state})
		if now := q.now(t); now != q.orig {
			t.Errorf("irq %d left at %s; putting back %s", q.irq, now, q.orig)
			os.WriteFile(q.path(), []byte(q.orig), 0)
		}
	})
	f := loopFigures{points: map[string]int{}, then: map[string]int{}}
	start := time.Now()
	d = startDaemon(t, state, q, rng.Uint64())
	for i := 0; i < kills; i++ {
		d.run(t)
		point := d.killInFlight(t, rng)
		f.kills++
		f.points[strings.Fields(point)[0]]++
		if b, err := os.ReadFile(d.points); err == nil {
			f.passed += strings.Count(string(b), "\n")
		}
		d = nil
		then := []string{"next steer", "tune rollback"}[i%2]
		f.then[then]++
		switch then {
		case "next steer":
			d = startDaemon(t, state, q, rng.Uint64())
		case "tune rollback":
			loopRollback(t, state)
		}
		if now := q.now(t); now != q.orig {
			f.leftMoved++
			t.Errorf("kill %d (after %s), then %s: irq %d at %s, want %s", i+1, point, then, q.irq, now, q.orig)
			os.WriteFile(q.path(), []byte(q.orig), 0)
		}
		if n := pendingIn(t, state); n != 0 {
			f.pendingLeft += n
			t.Errorf("kill %d (after %s), then %s: %d changes still pending", i+1, point, then, n)
			tune.Rollback(context.Background(), tune.RollbackOptions{StateDir: state})
		}
		if d == nil && i+1 < kills {
			d = startDaemon(t, state, q, rng.Uint64())
		}
	}
	took := time.Since(start)
	t.Logf("irq %d (%s): %s; %s (%.2f s a kill)", q.irq, q.orig, f, took.Round(time.Millisecond), took.Seconds()/float64(f.kills))
}

// loopRollback is `redline tune rollback` on the state directory: the
// binary when REDLINE_BIN names one, else the same call in-process.
func loopRollback(t *testing.T, state string) {
	t.Helper()
	if bin := os.Getenv(loopBinEnv); bin != "" {
		if out, err := exec.Command(bin, "tune", "rollback", "--state-dir", state).CombinedOutput(); err != nil {
			t.Fatalf("%s tune rollback: %v\n%s", bin, err, out)
		}
		return
	}
	if _, err := tune.Rollback(context.Background(), tune.RollbackOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
}

// pickLoopIRQ is a receive-queue IRQ of this machine whose affinity can be
// written, on a machine of at least 2 CPUs.
func pickLoopIRQ(t *testing.T) loopIRQ {
	t.Helper()
	snap, err := cpusAsDomains()
	if err != nil {
		t.Fatal(err)
	}
	if topo, _ := TopologyIn(snap, DomainNode); len(topo.CPUs) < 2 {
		t.Skip("needs 2 CPUs")
	}
	for _, qi := range QueueIRQsOf(snap) {
		q := loopIRQ{irq: qi.IRQ}
		q.orig = q.now(t)
		if err := os.WriteFile(q.path(), []byte(q.orig), 0); err == nil {
			return q
		}
	}
	t.Skip("no receive-queue IRQ whose affinity can be written")
	return loopIRQ{}
}
