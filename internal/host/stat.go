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
	times, err := parseStat(data)
	r.snap.CPU.Times = times
	return inFile(err, "/proc/stat")
}

func parseStat(data []byte) ([]CPUTime, error) {
	var out []CPUTime
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024) // the intr line is long
	for line := 1; sc.Scan(); line++ {
		name, rest, _ := strings.Cut(sc.Text(), " ")
		id, isCPU := strings.CutPrefix(name, "cpu")
		if !isCPU || id == "" {
			continue // the total line, intr, ctxt ...
		}
		cpu, err := strconv.Atoi(id)
		if err != nil {
			return out, lineErr(line, "%q is not cpuN", name)
		}
		f := strings.Fields(rest)
		if len(f) < 8 {
			return out, lineErr(line, "%s: %d fields, want at least 8", name, len(f))
		}
		var v [8]uint64
		for i := range v {
			if v[i], err = strconv.ParseUint(f[i], 10, 64); err != nil {
				return out, lineErr(line, "%s field %d %q is not a number", name, i+1, f[i])
			}
		}
		out = append(out, CPUTime{CPU: cpu, User: v[0], Nice: v[1], System: v[2], Idle: v[3],
			IOWait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7]})
	}
	return out, nil
}
