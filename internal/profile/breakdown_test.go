package profile

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"redline/internal/host"
	"redline/internal/testutil"
)

func fixtureBreakdown(t *testing.T) *Breakdown {
	t.Helper()
	at := time.Date(2026, 11, 30, 13, 0, 0, 0, time.UTC)
	snap := func(dir string, at time.Time) *Snapshot {
		// 38 and 39 are this VM's virtio-net queue IRQs (input.0, output.0).
		s, err := ReadSnapshot(BreakdownOptions{PID: 4242, Proc: fixtures + dir, Now: func() time.Time { return at },
			QueueIRQs: []int{38, 39}, NodeOf: map[int]int{0: 0, 1: 0}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	return Compare(snap("proc-before", at), snap("proc-after", at.Add(2*time.Second)), 4242)
}

func TestBreakdownFixture(t *testing.T) {
	b := fixtureBreakdown(t)
	var txt bytes.Buffer
	if err := WriteBreakdown(&txt, b); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, fixtures+"breakdown.golden", txt.Bytes())
	j, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, fixtures+"breakdown.json.golden", append(j, '\n'))

	if len(b.CPUs) != 2 || b.CPUs[0].User != 40 || b.CPUs[0].SoftIRQ != 18 || *b.CPUs[0].NetRX != 90000 {
		t.Errorf("cpu0: %+v", b.CPUs[0])
	}
	// The captured interrupts: 41 input and 41 output interrupts on CPU 0.
	if *b.CPUs[0].QueueIRQs != 82 || *b.CPUs[1].QueueIRQs != 0 || len(b.Nodes) != 1 || b.Nodes[0].QueueIRQs != 82 {
		t.Errorf("queue IRQs: cpu0 %d cpu1 %d nodes %+v", *b.CPUs[0].QueueIRQs, *b.CPUs[1].QueueIRQs, b.Nodes)
	}
	if sn := b.CPUs[0].Softnet; sn == nil || sn.Processed != 0x0ba0a8e8-0x0ba04bf0 || sn.Dropped != 0 || sn.Squeezed != 0 {
		t.Errorf("cpu0 softnet: %+v", sn)
	}
	main, io := b.Server.Threads[0], b.Server.Threads[1]
	if len(b.Server.Threads) != 2 {
		t.Fatalf("threads (the one that ended is left out): %+v", b.Server.Threads)
	}
	// 80 user ticks in 2 s = 40% of a CPU; schedstat: 1.5 s running,
	// 0.5 s waiting of 2 s.
	if main.UserPct != 40 || main.SysPct != 35 || *main.RunningPct != 75 || *main.RunQueuePct != 25 || *main.SleepingPct != 0 {
		t.Errorf("main thread: %+v", main)
	}
	if *main.Voluntary != 3500 || *main.Involuntary != 500 || *main.Migrations != 3 {
		t.Errorf("main thread switches: %+v", main.ThreadCounters)
	}
	if io.Comm != "io_thd_1 (x)" || *io.Voluntary != 20 || io.Migrations != nil {
		t.Errorf("io thread (status fallback, no migrations): %+v", io)
	}
	if *b.Server.Total.Voluntary != 3520 || *b.Server.Total.Migrations != 3 {
		t.Errorf("total: %+v", b.Server.Total)
	}
}

func TestBreakdownParsers(t *testing.T) {
	var ts ThreadSample
	if err := parseTaskStat([]byte("1 (a) S 1 2"), &ts); err == nil {
		t.Error("short stat: no error")
	}
	if err := parseSchedstat([]byte("1 2"), &ts); err == nil {
		t.Error("short schedstat: no error")
	}
	// A counter that went backwards (a reused TID) counts as zero.
	if d := delta(5, 3); d != 0 {
		t.Errorf("delta(5, 3) = %d", d)
	}
}

func TestBreakdownLive(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc")
	}
	r, err := StartBreakdown(BreakdownOptions{PID: os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(b.CPUs) == 0 || b.Server == nil || len(b.Server.Threads) == 0 {
		t.Errorf("live breakdown of the test itself: %+v", b)
	}
	if !strings.Contains(b.Server.Threads[0].Comm, "profile") {
		t.Logf("main thread comm %q", b.Server.Threads[0].Comm)
	}
}

// BenchmarkSnapshot is the breakdown's cost: one snapshot of the host and
// of a process (BENCH_PID, default this test binary); a run takes two.
// BENCH_QUEUE_IRQS=1 counts this host's NIC queue IRQs as the lab does.
// cpu-ns/op is the CPU time it used (getrusage), which a loaded machine
// does not inflate the way it does wall time.
func BenchmarkSnapshot(b *testing.B) {
	pid := os.Getpid()
	if v, err := strconv.Atoi(os.Getenv("BENCH_PID")); err == nil {
		pid = v
	}
	o := BreakdownOptions{PID: pid}
	if os.Getenv("BENCH_QUEUE_IRQS") != "" { // as the lab reads: /proc/interrupts too
		if err := o.LiveQueueIRQs(); err != nil {
			b.Fatal(err)
		}
		b.Logf("queue IRQs %v", o.QueueIRQs)
	}
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	for b.Loop() {
		if _, err := ReadSnapshot(o); err != nil {
			b.Fatal(err)
		}
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

func FuzzBreakdownParsers(f *testing.F) {
	for _, p := range []string{"proc-before/stat", "proc-before/softirqs", "proc-before/4242/task/4242/stat",
		"proc-before/4242/task/4242/schedstat", "proc-before/4242/task/4242/sched"} {
		data, err := os.ReadFile(fixtures + p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var ts ThreadSample
		parseTaskStat(data, &ts)
		parseSchedstat(data, &ts)
		parseSchedLines(data, &ts)
	})
}

// HostQueueIRQs takes the queue IRQs host's matcher found in a real
// capture (a 4-node Kunpeng 920 with a hinic NIC) and every CPU's node.
func TestHostQueueIRQsFixture(t *testing.T) {
	hfs, err := host.NewFS(filepath.Join("..", "..", "testdata", "hosts", "kunpeng920-4node-hinic"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := host.Read(hfs, host.Options{NoProcesses: true})
	if err != nil {
		t.Fatal(err)
	}
	var o BreakdownOptions
	o.HostQueueIRQs(snap)
	want := 0
	for _, n := range snap.NICs {
		want += len(n.QueueIRQs)
	}
	if want == 0 || len(o.QueueIRQs) != want {
		t.Fatalf("%d queue IRQs, the matcher mapped %d", len(o.QueueIRQs), want)
	}
	nodes := map[int]bool{}
	for _, n := range o.NodeOf {
		nodes[n] = true
	}
	if len(o.NodeOf) != len(snap.CPU.CPUs) || len(nodes) != 4 {
		t.Errorf("%d CPUs on %d nodes", len(o.NodeOf), len(nodes))
	}
}
