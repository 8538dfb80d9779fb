package report

import (
	"fmt"
	"slices"
	"strings"

	"redline/internal/labdata"
)

// Where the server's time went, per variant and workload: the lab's
// per-run /proc breakdowns averaged over the group's runs, shown beside
// the verdicts so the reason sits next to the result.

// serverTime is one group's breakdowns, averaged.
type serverTime struct {
	Variant, Workload string
	Runs              int
	// Server is all the server's threads' user+sys, % of one CPU; Main
	// the main thread's (the thread whose TID is the PID).
	Server float64
	Main   *threadAvg
	CPUs   []cpuAvg
	// Softnet drops and squeezes summed over CPUs and runs.
	Dropped, Squeezed uint64
	HasSoftnet        bool
}

type threadAvg struct {
	CPU                         float64  // user+sys, % of one CPU
	Running, RunQueue, Sleeping *float64 // % of wall time
	Involuntary                 *float64 // a second
}

type cpuAvg struct {
	CPU                          int
	User, System, SoftIRQ, Idle  float64 // % of the CPU
	NetRX, QueueIRQs, Processed  float64 // a second
	hasNetRX, hasQueue, hasSoftn bool
}

// serverTimes averages the runs' breakdowns per variant and workload, in
// the order the runs were taken; runs left out of the statistics (retried)
// are left out here too.
func serverTimes(res *labdata.Result) []serverTime {
	var out []serverTime
	for _, k := range groupOrder(res) {
		var bds []*labdata.Breakdown
		for _, r := range res.Runs {
			if r.Variant == k[0] && r.Workload == k[1] && r.Breakdown != nil && !r.Retried {
				bds = append(bds, r.Breakdown)
			}
		}
		if len(bds) > 0 {
			out = append(out, averageBreakdowns(k[0], k[1], bds))
		}
	}
	return out
}

func averageBreakdowns(variant, workload string, bds []*labdata.Breakdown) serverTime {
	st := serverTime{Variant: variant, Workload: workload, Runs: len(bds)}
	n := float64(len(bds))
	var mains []labdata.ThreadCounters
	var secs []float64
	for _, b := range bds {
		if b.Server != nil {
			st.Server += (b.Server.Total.UserPct + b.Server.Total.SysPct) / n
			if m := mainThread(b.Server); m != nil {
				mains = append(mains, m.ThreadCounters)
				secs = append(secs, b.Interval.Seconds())
			}
		}
	}
	st.Main = averageThread(mains, secs)
	st.CPUs = averageCPUs(bds, &st)
	return st
}

func mainThread(s *labdata.ServerBreakdown) *labdata.ThreadShare {
	for i := range s.Threads {
		if s.Threads[i].TID == s.PID {
			return &s.Threads[i]
		}
	}
	return nil
}

func averageThread(ts []labdata.ThreadCounters, secs []float64) *threadAvg {
	if len(ts) == 0 {
		return nil
	}
	a := &threadAvg{}
	n := float64(len(ts))
	avg := func(dst **float64, v *float64, scale float64) {
		if v == nil {
			return
		}
		if *dst == nil {
			*dst = new(float64)
		}
		**dst += *v * scale / n
	}
	for i, t := range ts {
		a.CPU += (t.UserPct + t.SysPct) / n
		avg(&a.Running, t.RunningPct, 1)
		avg(&a.RunQueue, t.RunQueuePct, 1)
		avg(&a.Sleeping, t.SleepingPct, 1)
		if t.Involuntary != nil && secs[i] > 0 {
			v := float64(*t.Involuntary)
			avg(&a.Involuntary, &v, 1/secs[i])
		}
	}
	return a
}

func averageCPUs(bds []*labdata.Breakdown, st *serverTime) []cpuAvg {
	by := map[int]*cpuAvg{}
	var ids []int
	n := float64(len(bds))
	for _, b := range bds {
		sec := b.Interval.Seconds()
		for _, c := range b.CPUs {
			a := by[c.CPU]
			if a == nil {
				a = &cpuAvg{CPU: c.CPU}
				by[c.CPU] = a
				ids = append(ids, c.CPU)
			}
			a.User += c.User / n
			a.System += c.System / n
			a.SoftIRQ += (c.SoftIRQ + c.IRQ) / n
			a.Idle += c.Idle / n
			if sec <= 0 {
				continue
			}
			if c.NetRX != nil {
				a.NetRX, a.hasNetRX = a.NetRX+float64(*c.NetRX)/sec/n, true
			}
			if c.QueueIRQs != nil {
				a.QueueIRQs, a.hasQueue = a.QueueIRQs+float64(*c.QueueIRQs)/sec/n, true
			}
			if s := c.Softnet; s != nil {
				a.Processed, a.hasSoftn = a.Processed+float64(s.Processed)/sec/n, true
				st.Dropped, st.Squeezed, st.HasSoftnet = st.Dropped+s.Dropped, st.Squeezed+s.Squeezed, true
			}
		}
	}
	slices.Sort(ids)
	out := make([]cpuAvg, 0, len(ids))
	for _, id := range ids {
		out = append(out, *by[id])
	}
	return out
}

// mainText is "93% of a CPU: on CPU 80%, waiting for a CPU 12%, asleep 8%;
// 1.2k involuntary switches/s".
func (a *threadAvg) text() string {
	if a == nil {
		return "-"
	}
	s := fmt.Sprintf("%.0f%% of a CPU", a.CPU)
	if a.Running != nil {
		s += fmt.Sprintf(": running %.0f%%, waiting for a CPU %.0f%%, asleep %.0f%%", *a.Running, *a.RunQueue, *a.Sleeping)
	}
	if a.Involuntary != nil {
		s += "; " + fmtRate(*a.Involuntary) + " involuntary switches/s"
	}
	return s
}

// text is "CPU 0: user 40%, sys 30%, irq+softirq 18%, idle 12%; 90k
// NET_RX/s, 0 NIC queue IRQs/s, 45k packets/s".
func (c cpuAvg) text() string {
	s := fmt.Sprintf("CPU %d: user %.0f%%, sys %.0f%%, irq+softirq %.0f%%, idle %.0f%%", c.CPU, c.User, c.System, c.SoftIRQ, c.Idle)
	var rates []string
	if c.hasNetRX {
		rates = append(rates, fmtRate(c.NetRX)+" NET_RX/s")
	}
	if c.hasQueue {
		rates = append(rates, fmtRate(c.QueueIRQs)+" NIC queue IRQs/s")
	}
	if c.hasSoftn {
		rates = append(rates, fmtRate(c.Processed)+" packets/s")
	}
	if len(rates) > 0 {
		s += "; " + strings.Join(rates, ", ")
	}
	return s
}

// softnetText is "0 dropped, 3 squeezed", or "-".
func (st serverTime) softnetText() string {
	if !st.HasSoftnet {
		return "-"
	}
	return fmt.Sprintf("%d dropped, %d squeezed", st.Dropped, st.Squeezed)
}

// fmtRate prints a per-second rate briefly: 950, 12.3k, 1.20M.
func fmtRate(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

var serverTimeHeader = []string{"variant", "runs", "server", "main thread", "CPUs", "softnet"}

// serverTimeRows are one workload's rows, one a variant.
func serverTimeRows(sts []serverTime, workload string) [][]string {
	var rows [][]string
	for _, st := range sts {
		if st.Workload != workload {
			continue
		}
		var cpus []string
		for _, c := range st.CPUs {
			cpus = append(cpus, c.text())
		}
		rows = append(rows, []string{st.Variant, itoa(st.Runs), fmt.Sprintf("%.0f%% of a CPU", st.Server),
			st.Main.text(), strings.Join(cpus, "; "), st.softnetText()})
	}
	return rows
}

// samplingNotes say what the breakdowns could not show.
func samplingNotes(res *labdata.Result) []string {
	s := res.Sampling
	if s == nil {
		return nil
	}
	var out []string
	if s.Breakdown != "" {
		out = append(out, "Server time: "+s.Breakdown+".")
	}
	if s.QueueIRQNote != "" {
		out = append(out, "NIC queue IRQs: "+s.QueueIRQNote+".")
	}
	return out
}

// serverTimeIntro says how to read the section.
const serverTimeIntro = "Averaged over each variant's runs, from /proc before and after every run (warm-up included): " +
	"the server's threads in % of one CPU; for its main thread, from schedstat, the share of the run it was running, " +
	"runnable but waiting for a CPU (contention, such as with the load generator on a small machine) and asleep " +
	"(blocked in epoll_wait for work); each CPU's time by state and its network work a second."
