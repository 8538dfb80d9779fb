// Package profiledata holds the saved forms of the server-side samples the
// lab takes during runs: the /proc breakdown (every run) and the CPU
// profile (one repetition a variant). internal/profile computes them;
// they live in this leaf so report, labdata and autotune read them
// without linking the engine.
package profiledata

import "time"

// Breakdown is where the time went between two snapshots of the server
// host's /proc.
type Breakdown struct {
	Interval time.Duration `json:"interval_ns"`
	CPUs     []CPUShare    `json:"cpus"`
	// Nodes are the NIC queue interrupts per NUMA node (only when queue
	// IRQs were counted and the CPUs' nodes are known).
	Nodes []NodeShare `json:"nodes,omitempty"`
	// Server is nil when no PID was given.
	Server *ServerBreakdown `json:"server,omitempty"`
}

// CPUShare is one CPU's time by state, in percent of its ticks over the
// interval, and its network work.
type CPUShare struct {
	CPU     int     `json:"cpu"`
	User    float64 `json:"user_pct"` // user + nice
	System  float64 `json:"system_pct"`
	IRQ     float64 `json:"irq_pct"`
	SoftIRQ float64 `json:"softirq_pct"`
	Steal   float64 `json:"steal_pct"`
	Idle    float64 `json:"idle_pct"` // idle + iowait
	// NetRX and NetTX count softirqs raised on the CPU (absent when
	// /proc/softirqs was not readable).
	NetRX *uint64 `json:"net_rx,omitempty"`
	NetTX *uint64 `json:"net_tx,omitempty"`
	// QueueIRQs counts the NIC queue interrupts the CPU took (absent
	// when no queue IRQs were counted: none on the host, or unknown).
	QueueIRQs *uint64 `json:"queue_irqs,omitempty"`
	// Softnet is the CPU's /proc/net/softnet_stat row over the interval
	// (absent when the file or the CPU's row was not there).
	Softnet *Softnet `json:"softnet,omitempty"`
}

// Softnet is a CPU's packet processing over an interval: packets taken
// off its backlog or NAPI poll (processed), dropped because the backlog
// was full (dropped), and times net_rx_action ran out of budget or time
// with work left (squeezed).
type Softnet struct {
	Processed uint64 `json:"processed"`
	Dropped   uint64 `json:"dropped"`
	Squeezed  uint64 `json:"squeezed"`
}

// NodeShare is one NUMA node's NIC queue interrupts over the interval.
type NodeShare struct {
	Node      int    `json:"node"`
	QueueIRQs uint64 `json:"queue_irqs"`
}

// ServerBreakdown is the server's threads over the interval.
type ServerBreakdown struct {
	PID     int            `json:"pid"`
	Threads []ThreadShare  `json:"threads"`
	Total   ThreadCounters `json:"total"` // summed over threads
}

// ThreadShare is one thread over the interval.
type ThreadShare struct {
	TID  int    `json:"tid"`
	Comm string `json:"comm"`
	CPU  int    `json:"cpu"` // last run on
	ThreadCounters
}

// ThreadCounters are a thread's (or the sum of threads') time and
// scheduling counts. Percentages are of one CPU over the interval.
// Running, RunQueue and Sleeping split the wall time from schedstat:
// on a CPU, runnable but waiting for one (contention with other tasks,
// such as the benchmark client on a small machine), and neither (for
// Redis's main thread: blocked in epoll_wait). Pointers are absent when
// the kernel does not export the counter.
type ThreadCounters struct {
	UserPct     float64  `json:"user_pct"`
	SysPct      float64  `json:"sys_pct"`
	RunningPct  *float64 `json:"running_pct,omitempty"`
	RunQueuePct *float64 `json:"runqueue_pct,omitempty"`
	SleepingPct *float64 `json:"sleeping_pct,omitempty"`
	Voluntary   *uint64  `json:"voluntary_switches,omitempty"`
	Involuntary *uint64  `json:"involuntary_switches,omitempty"`
	Migrations  *uint64  `json:"migrations,omitempty"`
}

// Function is one function's share of a profile. Self counts samples
// whose leaf is the function (time in its own code); Total counts
// samples with the function anywhere on the stack, once a sample.
type Function struct {
	Name     string  `json:"name"`
	Kernel   bool    `json:"kernel"`
	Self     int64   `json:"self"`
	Total    int64   `json:"total"`
	SelfPct  float64 `json:"self_pct"`
	TotalPct float64 `json:"total_pct"`
}

// TopTable is a profile's functions, split user/kernel, each sorted by
// self samples, then total, then name.
type TopTable struct {
	Samples int64 `json:"samples"`
	// KernelSamples are samples whose leaf is kernel code: the server's
	// time in system calls, softirqs run on its behalf and faults.
	KernelSamples int64      `json:"kernel_samples"`
	KernelPct     float64    `json:"kernel_pct"`
	User          []Function `json:"user"`
	Kernel        []Function `json:"kernel"`
	// UnknownSamples are samples with a frame perf could not name
	// ([unknown], or [binary] for an address in a binary without its
	// symbols) anywhere on the stack: the flame graph's share under such
	// a frame. UnknownPct is their share of Samples.
	UnknownSamples int64   `json:"unknown_samples"`
	UnknownPct     float64 `json:"unknown_pct"`
	// Event is the event perf sampled on: "cycles" with hardware
	// counters, "cpu-clock" (a software timer) without; "" when unknown.
	Event string `json:"event,omitempty"`
	// Caveats say, in a sentence each, what limits the numbers above:
	// every output that prints them prints these beside them.
	Caveats []string `json:"caveats,omitempty"`
}

// Move is how one function's share changed from a base profile to
// another: self and total shares in percent of each profile's samples.
type Move struct {
	Name          string  `json:"name"`
	Kernel        bool    `json:"kernel"`
	BaseSelfPct   float64 `json:"base_self_pct"`
	SelfPct       float64 `json:"self_pct"`
	DeltaSelfPct  float64 `json:"delta_self_pct"`
	BaseTotalPct  float64 `json:"base_total_pct"`
	TotalPct      float64 `json:"total_pct"`
	DeltaTotalPct float64 `json:"delta_total_pct"`
}

// RunProfile is the CPU profile of one run (scenario profile: true): perf
// record -g on the server for the run's length. Its files are in Dir,
// relative to the results directory.
type RunProfile struct {
	// Error says why there is no profile (perf missing or not allowed,
	// the server elsewhere); the run itself is unaffected.
	Error   string   `json:"error,omitempty"`
	Dir     string   `json:"dir,omitempty"`
	Samples int64    `json:"samples,omitempty"`
	Top     TopTable `json:"top,omitzero"`
	// Folded, Flame and DiffFlame are file names in Dir.
	Folded string `json:"folded,omitempty"`
	Flame  string `json:"flame,omitempty"`
	// BaseSeq is the baseline run this one is compared with (the
	// baseline's profiled run of the same workload), Moves the functions
	// whose share moved most, and DiffFlame this profile coloured by the
	// moves. Absent for the baseline itself.
	BaseSeq   int    `json:"base_seq,omitempty"`
	Moves     []Move `json:"moves,omitempty"`
	DiffFlame string `json:"diff_flame,omitempty"`
	// Preempted is who took the main thread's CPU while it was runnable
	// (sched:sched_switch traced during the run); SwitchError says why
	// it is absent.
	Preempted   *Preemptions `json:"preempted,omitempty"`
	SwitchError string       `json:"switch_error,omitempty"`
}

// Sampling says what the lab sampled on the server host during runs, and
// why not where it could not.
type Sampling struct {
	// Breakdown is "" when every run has a breakdown, or why none has
	// ("not sampled: the server runs elsewhere").
	Breakdown string `json:"breakdown,omitempty"`
	// QueueIRQs are the NIC queue IRQs counted (internal/host's queue
	// matcher, once at lab start); QueueIRQNote says why none are.
	QueueIRQs    []int  `json:"queue_irqs,omitempty"`
	QueueIRQNote string `json:"queue_irq_note,omitempty"`
	// Profile is true when the scenario asked for profiles; ProfileRep
	// is the repetition profiled.
	Profile    bool `json:"profile,omitempty"`
	ProfileRep int  `json:"profile_rep,omitempty"`
}

// Preemptions is who took a thread's CPU while it could still run: its
// sched_switch events with prev_state R (preempted, or yielded runnable),
// by the task switched to. It names the contention schedstat's
// runnable-but-waiting time measures.
type Preemptions struct {
	TID   int         `json:"tid"`
	Count uint64      `json:"count"`
	By    []Preemptor `json:"by"` // most first; the rest summed as "other"
	// Asleep counts the thread's switches out to sleep (prev_state S or
	// D: for Redis's main thread, epoll_wait with nothing to do).
	Asleep uint64 `json:"asleep"`
}

// Preemptor is a task (by comm) that took a preempted thread's CPU.
type Preemptor struct {
	Comm  string `json:"comm"`
	Count uint64 `json:"count"`
}
