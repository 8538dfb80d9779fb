package host

import (
	"bufio"
	"bytes"
	"strings"
)

// /proc/PID/task/TID/status, "Key:\tvalue" lines:
//
//	Cpus_allowed_list:	0-1
//	Mems_allowed_list:	0
//	VmRSS:	    8812 kB
//	VmSwap:	       0 kB
//
// The main thread's is the process's (/proc/PID/status shows the same),
// so only the task files are read.

// procStatus is what a status file says.
type procStatus struct {
	cpus, mems    *CPUSet
	vmRSS, vmSwap *uint64
}

func parseProcStatus(data []byte) (procStatus, error) {
	var st procStatus
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		var err error
		switch key {
		case "Cpus_allowed_list", "Mems_allowed_list":
			var set CPUSet
			if set, err = ParseCPUList(val); err == nil && key == "Cpus_allowed_list" {
				st.cpus = &set
			} else if err == nil {
				st.mems = &set
			}
		case "VmRSS", "VmSwap":
			var v uint64
			if v, err = parseSizeValue(val); err == nil && key == "VmRSS" {
				st.vmRSS = &v
			} else if err == nil {
				st.vmSwap = &v
			}
		}
		if err != nil {
			return st, lineErr(line, "%s: %w", key, err)
		}
	}
	return st, nil
}

// readThreadStatus fills the process's facts from the main thread's
// status and the thread's own affinity when it differs.
func readThreadStatus(r *reader, p *Process, t *Thread, path string) {
	data, ok := r.file(path)
	if !ok {
		if r.refused(path) {
			p.Refused = append(p.Refused, path)
		}
		return
	}
	st, err := parseProcStatus(data)
	if err != nil {
		r.fail(inFile(err, path))
	}
	if t.TID == p.PID {
		p.CPUsAllowed, p.MemsAllowed, p.VmRSS, p.VmSwap = st.cpus, st.mems, st.vmRSS, st.vmSwap
		return
	}
	if st.cpus != nil && (p.CPUsAllowed == nil || !st.cpus.Equal(*p.CPUsAllowed)) {
		t.CPUsAllowed = st.cpus
	}
}

// /proc/PID/smaps_rollup sums smaps over all mappings:
//
//	Rss:                1764 kB
//	AnonHugePages:         0 kB
func parseSmapsRollup(data []byte) (anonHuge *uint64, err error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		rest, ok := strings.CutPrefix(sc.Text(), "AnonHugePages:")
		if !ok {
			continue
		}
		v, err := parseSizeValue(rest)
		if err != nil {
			return nil, lineErr(line, "AnonHugePages: %w", err)
		}
		return &v, nil
	}
	return nil, nil
}
