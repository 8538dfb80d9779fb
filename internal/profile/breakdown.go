package profile

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"time"

	"redline/internal/host"
	"redline/internal/profiledata"
)

// clockTicks is USER_HZ, 100 on every Linux architecture redline runs on.
const clockTicks = 100

// BreakdownOptions say whose time to break down.
type BreakdownOptions struct {
	PID  int    // the server; 0 breaks down the host's CPUs only
	Proc string // where /proc is (default "/proc"), for fixture trees
	// FS, when set, is read instead of Proc: any fs.FS rooted at /proc,
	// such as the files a remote session's sample returned.
	FS fs.FS
	// Now stamps snapshots (default time.Now).
	Now func() time.Time
	// QueueIRQs are the NIC queue IRQs to count per CPU (the lab finds
	// them once with internal/host's queue matcher); none skips reading
	// /proc/interrupts. NodeOf maps CPUs to NUMA nodes, to sum them per
	// node.
	QueueIRQs []int
	NodeOf    map[int]int
}

// HostQueueIRQs fills o's QueueIRQs and NodeOf from a host model: the
// IRQs internal/host's matcher mapped to NIC queues, and each CPU's node.
// Read the model once (host.Read), not every run.
func (o *BreakdownOptions) HostQueueIRQs(snap *host.Snapshot) {
	o.QueueIRQs, o.NodeOf = nil, map[int]int{}
	for _, n := range snap.NICs {
		for _, q := range n.QueueIRQs {
			o.QueueIRQs = append(o.QueueIRQs, q.IRQ)
		}
	}
	for _, c := range snap.CPU.CPUs {
		if c.Node != nil {
			o.NodeOf[c.ID] = *c.Node
		}
	}
}

// LiveQueueIRQs is HostQueueIRQs on this host's model; on error o is
// left without queue IRQs (the breakdown then does not count them).
func (o *BreakdownOptions) LiveQueueIRQs() error {
	hfs, err := host.NewFS("/")
	if err != nil {
		return err
	}
	snap, err := host.Read(hfs, host.Options{NoProcesses: true})
	if err != nil {
		return err
	}
	o.HostQueueIRQs(snap)
	return nil
}

// Snapshot is the counters a breakdown compares, at one moment.
type Snapshot struct {
	At       time.Time
	CPUs     []host.CPUTime
	Softirqs *host.Softirqs // NET_RX and NET_TX only
	Threads  []ThreadSample // the server's, by TID
	// QueueIRQs are the NIC queue interrupts per CPU, summed over
	// BreakdownOptions.QueueIRQs (nil when none were asked for).
	QueueIRQs map[int]uint64
	// Softnet is /proc/net/softnet_stat (nil when not readable).
	Softnet []host.Softnet
	nodeOf  map[int]int
}

// ReadSnapshot reads /proc/stat, /proc/softirqs, /proc/net/softnet_stat,
// /proc/interrupts when queue IRQs are asked for, and, when pid > 0, every
// thread of pid: a few small files a thread, cheap enough to take before
// and after every run.
func ReadSnapshot(o BreakdownOptions) (*Snapshot, error) {
	o = o.withDefaults()
	s := &Snapshot{At: o.Now(), nodeOf: o.NodeOf}
	data, err := fs.ReadFile(o.FS, "stat")
	if err != nil {
		return nil, err
	}
	if _, s.CPUs, err = host.ParseCPUTimes(data); err != nil {
		return nil, err
	}
	if data, err := fs.ReadFile(o.FS, "softirqs"); err == nil {
		if s.Softirqs, err = host.ParseSoftirqs(data); err != nil {
			return nil, err
		}
	}
	if data, err := fs.ReadFile(o.FS, "net/softnet_stat"); err == nil {
		if s.Softnet, err = host.ParseSoftnet(data, nil); err != nil {
			return nil, fmt.Errorf("net/softnet_stat: %w", err)
		}
	}
	if len(o.QueueIRQs) > 0 {
		if s.QueueIRQs, err = readQueueIRQs(o.FS, o.QueueIRQs); err != nil {
			return nil, err
		}
	}
	if o.PID > 0 {
		if s.Threads, err = readThreads(o.FS, o.PID); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// readQueueIRQs sums the given IRQs' counts per CPU. An IRQ missing from
// the file (its device went away) counts nothing.
func readQueueIRQs(fsys fs.FS, irqs []int) (map[int]uint64, error) {
	data, err := fs.ReadFile(fsys, "interrupts")
	if err != nil {
		return nil, err
	}
	in, err := host.ParseInterrupts(data)
	if err != nil && len(in.IRQs) == 0 {
		return nil, fmt.Errorf("interrupts: %w", err)
	}
	out := make(map[int]uint64, len(in.CPUs))
	for _, c := range in.CPUs {
		out[c] = 0
	}
	for _, n := range irqs {
		if q := in.IRQ(n); q != nil {
			for c, v := range in.CountsByCPU(q) {
				out[c] += v
			}
		}
	}
	return out, nil
}

func (o BreakdownOptions) withDefaults() BreakdownOptions {
	if o.Proc == "" {
		o.Proc = "/proc"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.FS == nil {
		o.FS = os.DirFS(o.Proc)
	}
	return o
}

func readThreads(fsys fs.FS, pid int) ([]ThreadSample, error) {
	dir := path.Join(strconv.Itoa(pid), "task")
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("threads of process %d: %w", pid, err)
	}
	var out []ThreadSample
	for _, e := range entries {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		t, ok, err := readTask(fsys, path.Join(dir, e.Name()), tid)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TID < out[j].TID })
	return out, nil
}

// BreakdownRun is a breakdown under way: the first snapshot, taken.
type BreakdownRun struct {
	o      BreakdownOptions
	before *Snapshot
}

// StartBreakdown takes the first snapshot. Call Stop when the run ends.
// Nothing runs in between: the cost is two snapshots a run.
func StartBreakdown(o BreakdownOptions) (*BreakdownRun, error) {
	o = o.withDefaults()
	s, err := ReadSnapshot(o)
	if err != nil {
		return nil, fmt.Errorf("breakdown: %w", err)
	}
	return &BreakdownRun{o: o, before: s}, nil
}

// Stop takes the second snapshot and returns the difference.
func (r *BreakdownRun) Stop() (*Breakdown, error) {
	after, err := ReadSnapshot(r.o)
	if err != nil {
		return nil, fmt.Errorf("breakdown: %w", err)
	}
	return Compare(r.before, after, r.o.PID), nil
}

// The breakdown's saved types live in labdata (a leaf the report reads).
type (
	Breakdown       = profiledata.Breakdown
	CPUShare        = profiledata.CPUShare
	NodeShare       = profiledata.NodeShare
	ServerBreakdown = profiledata.ServerBreakdown
	ThreadShare     = profiledata.ThreadShare
	ThreadCounters  = profiledata.ThreadCounters
)

// Compare returns the breakdown between two snapshots of the same
// process. Threads in only one snapshot (started or ended in between)
// are left out; counters that went backwards count as zero.
func Compare(before, after *Snapshot, pid int) *Breakdown {
	b := &Breakdown{Interval: after.At.Sub(before.At)}
	b.CPUs = cpuShares(before, after)
	b.Nodes = nodeShares(b.CPUs, after.nodeOf)
	if pid > 0 {
		b.Server = serverShare(before, after, pid)
	}
	return b
}

func delta(a, b uint64) uint64 {
	if b < a {
		return 0
	}
	return b - a
}

func cpuShares(before, after *Snapshot) []CPUShare {
	prev := map[int]host.CPUTime{}
	for _, c := range before.CPUs {
		prev[c.CPU] = c
	}
	var out []CPUShare
	for _, c := range after.CPUs {
		p, ok := prev[c.CPU]
		if !ok {
			continue
		}
		d := []uint64{delta(p.User+p.Nice, c.User+c.Nice), delta(p.System, c.System), delta(p.IRQ, c.IRQ),
			delta(p.SoftIRQ, c.SoftIRQ), delta(p.Steal, c.Steal), delta(p.Idle+p.IOWait, c.Idle+c.IOWait)}
		var sum uint64
		for _, v := range d {
			sum += v
		}
		sh := CPUShare{CPU: c.CPU}
		for i, dst := range []*float64{&sh.User, &sh.System, &sh.IRQ, &sh.SoftIRQ, &sh.Steal, &sh.Idle} {
			*dst = pct(int64(d[i]), int64(sum))
		}
		sh.NetRX, sh.NetTX = softirqDelta(before, after, c.CPU, "NET_RX"), softirqDelta(before, after, c.CPU, "NET_TX")
		sh.QueueIRQs = queueIRQDelta(before, after, c.CPU)
		sh.Softnet = softnetDelta(before, after, c.CPU)
		out = append(out, sh)
	}
	return out
}

func softirqDelta(before, after *Snapshot, cpu int, name string) *uint64 {
	get := func(s *Snapshot) (uint64, bool) {
		if s.Softirqs == nil {
			return 0, false
		}
		for i, c := range s.Softirqs.CPUs {
			if c == cpu && i < len(s.Softirqs.Counts[name]) {
				return s.Softirqs.Counts[name][i], true
			}
		}
		return 0, false
	}
	a, ok1 := get(before)
	b, ok2 := get(after)
	if !ok1 || !ok2 {
		return nil
	}
	d := delta(a, b)
	return &d
}

func queueIRQDelta(before, after *Snapshot, cpu int) *uint64 {
	a, ok1 := before.QueueIRQs[cpu]
	b, ok2 := after.QueueIRQs[cpu]
	if !ok1 || !ok2 {
		return nil
	}
	d := delta(a, b)
	return &d
}

func softnetDelta(before, after *Snapshot, cpu int) *profiledata.Softnet {
	row := func(s *Snapshot) *host.Softnet {
		for i := range s.Softnet {
			if s.Softnet[i].CPU == cpu {
				return &s.Softnet[i]
			}
		}
		return nil
	}
	a, b := row(before), row(after)
	if a == nil || b == nil {
		return nil
	}
	return &profiledata.Softnet{Processed: delta(a.Processed, b.Processed), Dropped: delta(a.Dropped, b.Dropped),
		Squeezed: delta(a.TimeSqueeze, b.TimeSqueeze)}
}

// nodeShares sums the CPUs' queue interrupts per NUMA node; nil when no
// queue IRQs were counted or no CPU's node is known.
func nodeShares(cpus []CPUShare, nodeOf map[int]int) []NodeShare {
	sums := map[int]uint64{}
	for _, c := range cpus {
		n, ok := nodeOf[c.CPU]
		if c.QueueIRQs == nil || !ok {
			continue
		}
		sums[n] += *c.QueueIRQs
	}
	var out []NodeShare
	for n, v := range sums {
		out = append(out, NodeShare{Node: n, QueueIRQs: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

func serverShare(before, after *Snapshot, pid int) *ServerBreakdown {
	prev := map[int]ThreadSample{}
	for _, t := range before.Threads {
		prev[t.TID] = t
	}
	wallNs := float64(after.At.Sub(before.At).Nanoseconds())
	sb := &ServerBreakdown{PID: pid}
	for _, t := range after.Threads {
		p, ok := prev[t.TID]
		if !ok {
			continue
		}
		ts := ThreadShare{TID: t.TID, Comm: t.Comm, CPU: t.CPU, ThreadCounters: threadCounters(p, t, wallNs)}
		sb.Threads = append(sb.Threads, ts)
		addCounters(&sb.Total, ts.ThreadCounters)
	}
	return sb
}

func threadCounters(p, t ThreadSample, wallNs float64) ThreadCounters {
	var c ThreadCounters
	tickNs := float64(time.Second / clockTicks)
	if wallNs > 0 {
		c.UserPct = 100 * float64(delta(p.UTime, t.UTime)) * tickNs / wallNs
		c.SysPct = 100 * float64(delta(p.STime, t.STime)) * tickNs / wallNs
	}
	if p.RunNs != nil && t.RunNs != nil && wallNs > 0 {
		run := 100 * float64(delta(*p.RunNs, *t.RunNs)) / wallNs
		wait := 100 * float64(delta(*p.WaitNs, *t.WaitNs)) / wallNs
		sleep := max(0, 100-run-wait)
		c.RunningPct, c.RunQueuePct, c.SleepingPct = &run, &wait, &sleep
	}
	c.Voluntary = counterDelta(p.Voluntary, t.Voluntary)
	c.Involuntary = counterDelta(p.Involuntary, t.Involuntary)
	c.Migrations = counterDelta(p.Migrations, t.Migrations)
	return c
}

func counterDelta(a, b *uint64) *uint64 {
	if a == nil || b == nil {
		return nil
	}
	d := delta(*a, *b)
	return &d
}

// addCounters sums o into c; a pointer stays absent until a thread has it.
func addCounters(c *ThreadCounters, o ThreadCounters) {
	c.UserPct += o.UserPct
	c.SysPct += o.SysPct
	addF := func(dst **float64, v *float64) {
		if v != nil {
			if *dst == nil {
				*dst = new(float64)
			}
			**dst += *v
		}
	}
	addU := func(dst **uint64, v *uint64) {
		if v != nil {
			if *dst == nil {
				*dst = new(uint64)
			}
			**dst += *v
		}
	}
	addF(&c.RunningPct, o.RunningPct)
	addF(&c.RunQueuePct, o.RunQueuePct)
	addF(&c.SleepingPct, o.SleepingPct)
	addU(&c.Voluntary, o.Voluntary)
	addU(&c.Involuntary, o.Involuntary)
	addU(&c.Migrations, o.Migrations)
}

// WriteBreakdown writes b as text: a table of CPUs, the NIC queue
// interrupts per node, then the server's threads.
func WriteBreakdown(w io.Writer, b *Breakdown) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "over %.2fs\n\n%-5s %6s %6s %6s %8s %6s %6s %10s %10s %9s %10s %8s %8s\n", b.Interval.Seconds(),
		"cpu", "user%", "sys%", "irq%", "softirq%", "steal%", "idle%", "NET_RX", "NET_TX", "queue-irq", "processed", "dropped", "squeezed")
	for _, c := range b.CPUs {
		proc, drop, sq := "-", "-", "-"
		if s := c.Softnet; s != nil {
			proc, drop, sq = strconv.FormatUint(s.Processed, 10), strconv.FormatUint(s.Dropped, 10), strconv.FormatUint(s.Squeezed, 10)
		}
		fmt.Fprintf(bw, "%-5d %6.1f %6.1f %6.1f %8.1f %6.1f %6.1f %10s %10s %9s %10s %8s %8s\n", c.CPU, c.User, c.System,
			c.IRQ, c.SoftIRQ, c.Steal, c.Idle, optU(c.NetRX), optU(c.NetTX), optU(c.QueueIRQs), proc, drop, sq)
	}
	for _, n := range b.Nodes {
		fmt.Fprintf(bw, "node %d: %d NIC queue interrupts\n", n.Node, n.QueueIRQs)
	}
	if b.Server != nil {
		fmt.Fprintf(bw, "\nprocess %d, %% of one CPU; running/runqueue/sleeping split wall time (schedstat)\n", b.Server.PID)
		fmt.Fprintf(bw, "%-8s %-16s %4s %6s %6s %8s %9s %9s %10s %10s %10s\n", "tid", "thread", "cpu",
			"user%", "sys%", "running%", "runqueue%", "sleeping%", "voluntary", "involuntary", "migrations")
		for _, t := range b.Server.Threads {
			writeThread(bw, strconv.Itoa(t.TID), t.Comm, strconv.Itoa(t.CPU), t.ThreadCounters)
		}
		writeThread(bw, "all", "", "", b.Server.Total)
	}
	return bw.Flush()
}

func writeThread(w io.Writer, tid, comm, cpu string, c ThreadCounters) {
	fmt.Fprintf(w, "%-8s %-16s %4s %6.1f %6.1f %8s %9s %9s %10s %10s %10s\n", tid, comm, cpu, c.UserPct, c.SysPct,
		optF(c.RunningPct), optF(c.RunQueuePct), optF(c.SleepingPct), optU(c.Voluntary), optU(c.Involuntary), optU(c.Migrations))
}

func optU(v *uint64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatUint(*v, 10)
}

func optF(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', 1, 64)
}
