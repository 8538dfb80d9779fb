package host

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// /proc/vmstat, one counter a line:
//
//	numa_hint_faults 0
//	numa_pages_migrated 0
//	pswpin 0
func readVMStat(r *reader) error {
	data, ok := r.file("/proc/vmstat")
	if !ok {
		return nil
	}
	v, err := parseVMStat(data)
	r.snap.VMStat = v
	return inFile(err, "/proc/vmstat")
}

var vmstatFields = map[string]func(*VMStat) **uint64{
	"numa_hint_faults":       func(v *VMStat) **uint64 { return &v.NUMAHintFaults },
	"numa_hint_faults_local": func(v *VMStat) **uint64 { return &v.NUMAHintFaultsLocal },
	"numa_pages_migrated":    func(v *VMStat) **uint64 { return &v.NUMAPagesMigrated },
	"numa_pte_updates":       func(v *VMStat) **uint64 { return &v.NUMAPTEUpdates },
	"pswpin":                 func(v *VMStat) **uint64 { return &v.PswpIn },
	"pswpout":                func(v *VMStat) **uint64 { return &v.PswpOut },
	"pgmajfault":             func(v *VMStat) **uint64 { return &v.PgMajFault },
	"thp_fault_alloc":        func(v *VMStat) **uint64 { return &v.THPFaultAlloc },
	"compact_stall":          func(v *VMStat) **uint64 { return &v.CompactStall },
}

func parseVMStat(data []byte) (VMStat, error) {
	var v VMStat
	var first error
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		name, val, ok := strings.Cut(sc.Text(), " ")
		field := vmstatFields[name]
		if !ok || field == nil {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(val), 10, 64)
		if err != nil {
			if first == nil {
				first = lineErr(line, "%s: %w", name, err)
			}
			continue
		}
		*field(&v) = &n
	}
	return v, first
}
