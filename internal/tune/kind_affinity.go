package tune

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"redline/internal/change"
	"redline/internal/host"
)

// The CPU affinity of every thread of a process. Value is a CPU list for
// all threads; an old value whose threads differed is recorded per thread
// as "TID=LIST TID=LIST" (for example a Redis whose io-threads were pinned
// with server_cpulist), and restoring it puts each thread back.

func init() {
	registerKind(change.KindAffinity, &kindOps{
		check:    checkAffinity,
		read:     readAffinity,
		write:    writeAffinity,
		identity: processStart,
	})
}

// AffinityController reads and sets one thread's CPU affinity.
type AffinityController interface {
	Get(tid int) (host.CPUSet, error)
	Set(tid int, cpus host.CPUSet) error
}

// SchedAffinity is sched_getaffinity(2) and sched_setaffinity(2).
type SchedAffinity struct{}

// Get returns tid's allowed CPUs.
func (SchedAffinity) Get(tid int) (host.CPUSet, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(tid, &set); err != nil {
		return host.CPUSet{}, fmt.Errorf("sched_getaffinity %d: %w", tid, err)
	}
	var out host.CPUSet
	for cpu := 0; cpu < len(set)*64; cpu++ {
		if set.IsSet(cpu) {
			out.Add(cpu)
		}
	}
	return out, nil
}

// Set pins tid to cpus.
func (SchedAffinity) Set(tid int, cpus host.CPUSet) error {
	var set unix.CPUSet
	for _, c := range cpus.CPUs() {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(tid, &set); err != nil {
		return fmt.Errorf("sched_setaffinity %d to %s: %w", tid, cpus.List(), err)
	}
	return nil
}

func checkAffinity(ctx context.Context, s *System, c change.Change) error {
	if s.Affinity == nil {
		return refuse("thread affinity can only be set on the live host", nil)
	}
	if want, ok := strings.CutPrefix(c.Guard, "comm="); ok {
		b, err := s.FS.ReadFile("/proc/" + c.Target + "/comm")
		if err != nil {
			return classify(c, err)
		}
		if got := strings.TrimSpace(string(b)); got != want {
			return refuse(fmt.Sprintf("pid %s is now %q, not %q: the plan is stale (run redline tune plan again)", c.Target, got, want), nil)
		}
	}
	_, err := readAffinity(ctx, s, c)
	return err
}

// threads lists the thread ids of process pid from /proc/PID/task.
func threads(s *System, pid string) ([]int, error) {
	ents, err := s.FS.ReadDir("/proc/" + pid + "/task")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, tid)
		}
	}
	slices.Sort(out)
	return out, nil
}

// readAffinity returns one CPU list when every thread has the same
// affinity, else "TID=LIST ..." for each thread.
func readAffinity(_ context.Context, s *System, c change.Change) (string, error) {
	if s.Affinity == nil {
		return "", refuse("thread affinity can only be read on the live host", nil)
	}
	tids, err := threads(s, c.Target)
	if err != nil {
		return "", classify(c, err)
	}
	per := map[int]host.CPUSet{}
	for _, tid := range tids {
		cpus, err := s.Affinity.Get(tid)
		if isMissing(err) {
			continue // the thread exited while we looked
		}
		if err != nil {
			return "", classify(c, err)
		}
		per[tid] = cpus
	}
	if len(per) == 0 {
		return "", refuse("process "+c.Target+" has no threads left (it exited)", nil)
	}
	return formatAffinity(per), nil
}

func formatAffinity(per map[int]host.CPUSet) string {
	tids := make([]int, 0, len(per))
	for tid := range per {
		tids = append(tids, tid)
	}
	slices.Sort(tids)
	uniform := true
	for _, tid := range tids[1:] {
		uniform = uniform && per[tid].Equal(per[tids[0]])
	}
	if uniform {
		return per[tids[0]].List()
	}
	parts := make([]string, len(tids))
	for i, tid := range tids {
		parts[i] = strconv.Itoa(tid) + "=" + per[tid].List()
	}
	return strings.Join(parts, " ")
}

// writeAffinity pins every thread. With a per-thread value, threads born
// since it was read get the main thread's old affinity, as they would have
// inherited it.
func writeAffinity(_ context.Context, s *System, c change.Change, v string) error {
	all, per, err := change.ParseAffinity(v)
	if err != nil {
		return err
	}
	pid, _ := strconv.Atoi(c.Target)
	tids, err := threads(s, c.Target)
	if err != nil {
		return classify(c, err)
	}
	for _, tid := range tids {
		want, ok := all, true
		if per != nil {
			if want, ok = per[tid]; !ok {
				want, ok = per[pid]
			}
		}
		if !ok {
			continue
		}
		if err := s.Affinity.Set(tid, want); err != nil && !isMissing(err) {
			return classify(c, err)
		}
	}
	return nil
}

// processStart is field 22 of /proc/PID/stat, the start time in clock
// ticks since boot: with the boot id it tells a restarted process (or a
// reused pid) from the one the change was made to.
func processStart(_ context.Context, s *System, c change.Change) (string, error) {
	b, err := s.FS.ReadFile("/proc/" + c.Target + "/stat")
	if err != nil {
		return "", classify(c, err)
	}
	return parseStartTime(string(b))
}

// parseStartTime reads the start time from a /proc/PID/stat line such as
// "1234 (redis-server) S 1 1234 1234 0 -1 4194560 ... 22 fields ...".
// The command name may hold spaces and parentheses, so fields are counted
// after its last ')'.
func parseStartTime(stat string) (string, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return "", fmt.Errorf("unexpected /proc/PID/stat format: %.40q", stat)
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state); the start time is field 22.
	if len(f) < 20 {
		return "", fmt.Errorf("unexpected /proc/PID/stat format: %d fields after the name", len(f))
	}
	return f[19], nil
}
