package host

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// /proc/net/softnet_stat has a row of hex fields per CPU with a backlog
// (softnet_seq_show in net/core/net-procfs.c): processed, dropped,
// time_squeeze, five zeros, a zero (was cpu_collision), received_rps,
// flow_limit_count, then (5.10+) backlog length and CPU number, then
// (6.x) input and process queue lengths:
//
//	0000006a 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000
func readSoftnet(r *reader) error {
	data, ok := r.file("/proc/net/softnet_stat")
	if !ok {
		return nil
	}
	rows, err := parseSoftnet(data, r.snap.CPU.Online)
	r.snap.Softnet = rows
	return inFile(err, "/proc/net/softnet_stat")
}

// ParseSoftnet parses /proc/net/softnet_stat, for readers that sample it
// alone (the lab's per-run breakdown). online may be nil on 5.10+ kernels,
// whose rows carry their CPU.
func ParseSoftnet(data []byte, online *CPUSet) ([]Softnet, error) { return parseSoftnet(data, online) }

// parseSoftnet reads the rows. Before 5.10 rows carry no CPU number; they
// are then the online CPUs in order (the kernel skips CPUs without data,
// which older kernels only do for offline ones).
func parseSoftnet(data []byte, online *CPUSet) ([]Softnet, error) {
	var rows []Softnet
	var cpus []int
	if online != nil {
		cpus = online.CPUs()
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 11 {
			return rows, lineErr(line, "%d fields, want at least 11", len(f))
		}
		v := make([]uint64, len(f))
		for i, s := range f {
			n, err := strconv.ParseUint(s, 16, 64)
			if err != nil {
				return rows, lineErr(line, "field %d %q is not hex", i+1, s)
			}
			v[i] = n
		}
		row := Softnet{CPU: line - 1, Processed: v[0], Dropped: v[1], TimeSqueeze: v[2], ReceivedRPS: v[9], FlowLimit: v[10]}
		if line-1 < len(cpus) {
			row.CPU = cpus[line-1]
		}
		if len(f) >= 13 {
			row.BacklogLen, row.CPU = u64Ptr(v[11]), int(v[12])
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// softnetTotals sums the rows (for the summary).
func softnetTotals(rows []Softnet) (processed, dropped, squeezed uint64) {
	for _, r := range rows {
		processed += r.Processed
		dropped += r.Dropped
		squeezed += r.TimeSqueeze
	}
	return
}
