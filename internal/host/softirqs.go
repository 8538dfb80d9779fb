package host

import (
	"bufio"
	"bytes"
	"strings"
)

// /proc/softirqs, a header of CPU columns then a row per softirq:
//
//	              CPU0       CPU1
//	    HI:          0          0
//	NET_TX:          6          0
//	NET_RX:       1846       2007
func readSoftirqs(r *reader) error {
	data, ok := r.file("/proc/softirqs")
	if !ok {
		return nil
	}
	s, err := ParseSoftirqs(data)
	if s != nil {
		r.snap.Softirqs = s
	}
	return inFile(err, "/proc/softirqs")
}

// ParseSoftirqs parses /proc/softirqs: the CPU columns, then one row of
// per-CPU counts a softirq.
func ParseSoftirqs(data []byte) (*Softirqs, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	if !sc.Scan() {
		return nil, lineErr(1, "empty file")
	}
	cpus, err := parseInterruptHeader(sc.Text())
	if err != nil {
		return nil, &ParseError{Line: 1, Err: err}
	}
	s := &Softirqs{CPUs: cpus, Counts: map[string][]uint64{}}
	for line := 2; sc.Scan(); line++ {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return s, lineErr(line, "no \"NAME:\" in %q", clip(sc.Text()))
		}
		counts, tail, err := parseCounts(rest, len(cpus))
		if err != nil || len(counts) != len(cpus) || strings.TrimSpace(tail) != "" {
			return s, lineErr(line, "%s: want %d counts", name, len(cpus))
		}
		s.Counts[name] = counts
	}
	return s, nil
}
