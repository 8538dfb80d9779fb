package host

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// /proc/meminfo:
//
//	MemTotal:       24609496 kB
//	SwapTotal:             0 kB
//	AnonHugePages:     43008 kB
//	HugePages_Total:       0
func readMeminfo(r *reader) error {
	data, ok := r.file("/proc/meminfo")
	if !ok {
		return nil
	}
	m, err := parseMeminfo(data)
	r.snap.Memory = m
	return inFile(err, "/proc/meminfo")
}

// meminfoFields maps /proc/meminfo names onto Meminfo's fields.
var meminfoFields = map[string]func(*Meminfo) **uint64{
	"MemTotal":        func(m *Meminfo) **uint64 { return &m.MemTotal },
	"MemFree":         func(m *Meminfo) **uint64 { return &m.MemFree },
	"MemAvailable":    func(m *Meminfo) **uint64 { return &m.MemAvailable },
	"Cached":          func(m *Meminfo) **uint64 { return &m.Cached },
	"SwapTotal":       func(m *Meminfo) **uint64 { return &m.SwapTotal },
	"SwapFree":        func(m *Meminfo) **uint64 { return &m.SwapFree },
	"AnonHugePages":   func(m *Meminfo) **uint64 { return &m.AnonHugePages },
	"CommitLimit":     func(m *Meminfo) **uint64 { return &m.CommitLimit },
	"Committed_AS":    func(m *Meminfo) **uint64 { return &m.CommittedAS },
	"HugePages_Total": func(m *Meminfo) **uint64 { return &m.HugePagesTotal },
	"HugePages_Free":  func(m *Meminfo) **uint64 { return &m.HugePagesFree },
	"Hugepagesize":    func(m *Meminfo) **uint64 { return &m.Hugepagesize },
}

// parseMeminfo reads the fields Meminfo keeps; values in kB become bytes.
func parseMeminfo(data []byte) (Meminfo, error) {
	var m Meminfo
	var first error
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		field := meminfoFields[name]
		if !ok || field == nil {
			continue
		}
		v, err := parseSizeValue(rest)
		if err != nil {
			if first == nil {
				first = lineErr(line, "%s: %w", name, err)
			}
			continue
		}
		*field(&m) = &v
	}
	return m, first
}

// parseSizeValue reads "   43008 kB" (bytes) or "   0" (a count).
func parseSizeValue(s string) (uint64, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, strconv.ErrSyntax
	}
	v, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return 0, err
	}
	if len(f) > 1 && f[1] == "kB" {
		v *= 1024
	}
	return v, nil
}
