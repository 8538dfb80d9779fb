package host

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// /proc/stat's per-CPU lines give the time each CPU spent in each state,
// in clock ticks (USER_HZ, normally 100 a second):
//
//	cpu0 59775 149 21023 162591 364 0 2094 134 0 0
//	     user  nice system idle iowait irq softirq steal guest guest_nice
//
// Two snapshots' difference says which CPUs are busy, and with what: a
// CPU hot in softirq is where a NIC queue's packets are processed.
func readStat(r *reader) error {
	data, ok := r.file("/proc/stat")
	if !ok {
		return nil
	}
	_, times, err := ParseCPUTimes(data)
	r.snap.CPU.Times = times
	return inFile(err, "/proc/stat")
}

// ParseCPUTimes parses /proc/stat: the all-CPU total line (CPU -1) and
// each CPU's line. The lab's noise probe and the snapshot both read it
// here.
func ParseCPUTimes(data []byte) (total CPUTime, perCPU []CPUTime, err error) {
	total.CPU = -1
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024) // the intr line is long
	for line := 1; sc.Scan(); line++ {
		name, rest, _ := strings.Cut(sc.Text(), " ")
		id, isCPU := strings.CutPrefix(name, "cpu")
		if !isCPU {
			continue // intr, ctxt ...
		}
		cpu := -1
		if id != "" {
			if cpu, err = strconv.Atoi(id); err != nil {
				return total, perCPU, lineErr(line, "%q is not cpuN", name)
			}
		}
		t, err := parseCPUTimeLine(line, name, rest)
		if err != nil {
			return total, perCPU, err
		}
		t.CPU = cpu
		if cpu < 0 {
			total = t
		} else {
			perCPU = append(perCPU, t)
		}
	}
	return total, perCPU, nil
}

func parseCPUTimeLine(line int, name, rest string) (CPUTime, error) {
	f := strings.Fields(rest)
	if len(f) < 8 {
		return CPUTime{}, lineErr(line, "%s: %d fields, want at least 8", name, len(f))
	}
	var v [8]uint64
	for i := range v {
		var err error
		if v[i], err = strconv.ParseUint(f[i], 10, 64); err != nil {
			return CPUTime{}, lineErr(line, "%s field %d %q is not a number", name, i+1, f[i])
		}
	}
	return CPUTime{User: v[0], Nice: v[1], System: v[2], Idle: v[3],
		IOWait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7]}, nil
}

// Busy is the time spent working: everything but idle, iowait and steal.
func (t CPUTime) Busy() uint64 { return t.User + t.Nice + t.System + t.IRQ + t.SoftIRQ }

// Total is the time accounted: busy, idle, iowait and steal.
func (t CPUTime) Total() uint64 { return t.Busy() + t.Idle + t.IOWait + t.Steal }
