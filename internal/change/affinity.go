package change

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"redline/internal/cpuset"
)

// The CPU affinity of every thread of a process. Value is a CPU list for
// all threads; an old value whose threads differed is recorded per thread
// as "TID=LIST TID=LIST".

func validateAffinity(c Change) error {
	if pid, err := strconv.Atoi(c.Target); err != nil || pid <= 0 {
		return errors.New("target must be a process id")
	}
	if !strings.HasPrefix(c.Guard, "comm=redis-server") {
		return fmt.Errorf("guard %q: an affinity change moves a redis-server only, and says so with guard: comm=redis-server (the process's name when planned)", c.Guard)
	}
	_, _, err := ParseAffinity(c.Value)
	return err
}

// ParseAffinity reads a CPU list (all threads) or "TID=LIST ..." (per
// thread).
func ParseAffinity(v string) (all cpuset.Set, per map[int]cpuset.Set, err error) {
	if !strings.Contains(v, "=") {
		all, err = cpuset.ParseList(v)
		if err == nil && all.IsEmpty() {
			err = errors.New("empty CPU list")
		}
		return all, nil, err
	}
	per = map[int]cpuset.Set{}
	for _, f := range strings.Fields(v) {
		t, list, _ := strings.Cut(f, "=")
		tid, terr := strconv.Atoi(t)
		cpus, lerr := cpuset.ParseList(list)
		if terr != nil || lerr != nil || cpus.IsEmpty() {
			return cpuset.Set{}, nil, fmt.Errorf("%q is not TID=CPULIST", f)
		}
		per[tid] = cpus
	}
	return cpuset.Set{}, per, nil
}

// sameAffinity compares two affinity values over the threads both name.
func sameAffinity(a, b string) bool {
	allA, perA, errA := ParseAffinity(a)
	allB, perB, errB := ParseAffinity(b)
	if errA != nil || errB != nil {
		return a == b
	}
	switch {
	case perA == nil && perB == nil:
		return allA.Equal(allB)
	case perA == nil:
		return everyThread(perB, allA)
	case perB == nil:
		return everyThread(perA, allB)
	}
	common := 0
	for tid, cpus := range perA {
		if other, ok := perB[tid]; ok {
			if !other.Equal(cpus) {
				return false
			}
			common++
		}
	}
	return common > 0
}

func everyThread(per map[int]cpuset.Set, cpus cpuset.Set) bool {
	for _, c := range per {
		if !c.Equal(cpus) {
			return false
		}
	}
	return true
}

// IRQAffinityFile is the file that holds irq's CPU affinity (a cpulist).
func IRQAffinityFile(irq int) string { return "/proc/irq/" + strconv.Itoa(irq) + "/smp_affinity_list" }

// IRQAffinity is the change that delivers irq on cpu alone: the one way
// the doctor's fixes, tune's irq-local profile and steer build it.
func IRQAffinity(irq, cpu int, why string) Change {
	return Change{Kind: KindFile, Target: IRQAffinityFile(irq), Value: strconv.Itoa(cpu), Why: why}
}
