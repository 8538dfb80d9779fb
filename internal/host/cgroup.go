package host

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// A process's cgroups are named in /proc/PID/cgroup, one line per
// hierarchy ("ID:controllers:path"; v2 is "0::path"):
//
//	4:memory:/user.slice
//	3:cpuset:/
//	0::/system.slice/redis-server.service
//
// and found where the inspector's /proc/self/mountinfo mounts them:
//
//	34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
//	30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate
//
// The limits are cpuset.cpus.effective, cpu.max, cpu.stat and memory.max
// on v2; cpuset.effective_cpus, cpu.cfs_quota_us/cfs_period_us, cpu.stat
// and memory.limit_in_bytes on v1.

// mount is one mountinfo line.
type mount struct {
	root, point, fstype string
	options, super      []string
}

func parseMountinfo(data []byte) ([]mount, error) {
	var out []mount
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for line := 1; sc.Scan(); line++ {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 6 || len(g) < 3 {
			return out, lineErr(line, "not a mountinfo line: %q", clip(sc.Text()))
		}
		out = append(out, mount{root: unescapeMount(f[3]), point: unescapeMount(f[4]), fstype: g[0],
			options: strings.Split(f[5], ","), super: strings.Split(g[2], ",")})
	}
	return out, nil
}

// unescapeMount undoes mountinfo's octal escapes ("\040" is a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mounts reads /proc/self/mountinfo once.
func (r *reader) mounts() []mount {
	if r.mountinfo != nil {
		return r.mountinfo
	}
	r.mountinfo = []mount{}
	if data, ok := r.file("/proc/self/mountinfo"); ok {
		m, err := parseMountinfo(data)
		if err != nil {
			r.fail(inFile(err, "/proc/self/mountinfo"))
		}
		r.mountinfo = m
	}
	return r.mountinfo
}

// cgroupLine is one line of /proc/PID/cgroup.
type cgroupLine struct {
	controllers []string
	path        string
}

func parseProcCgroup(data []byte) ([]cgroupLine, error) {
	var out []cgroupLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		f := strings.SplitN(sc.Text(), ":", 3)
		if len(f) != 3 {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			return out, lineErr(line, "want ID:controllers:path, got %q", clip(sc.Text()))
		}
		var ctrls []string
		if f[1] != "" {
			ctrls = strings.Split(f[1], ",")
		}
		out = append(out, cgroupLine{controllers: ctrls, path: f[2]})
	}
	return out, nil
}

// cgroupDir finds the directory of a controller's cgroup: on a v1
// hierarchy that has the controller, else on the v2 one.
func cgroupDir(lines []cgroupLine, mounts []mount, controller string) (dir string, version int, cgPath string) {
	for _, l := range lines {
		if !contains(l.controllers, controller) {
			continue
		}
		for _, m := range mounts {
			if m.fstype == "cgroup" && contains(m.super, controller) {
				return joinCgroup(m, l.path), 1, l.path
			}
		}
	}
	for _, l := range lines {
		if len(l.controllers) != 0 {
			continue
		}
		for _, m := range mounts {
			if m.fstype == "cgroup2" {
				return joinCgroup(m, l.path), 2, l.path
			}
		}
	}
	return "", 0, ""
}

// joinCgroup places a cgroup path below a mount whose root may itself be
// a cgroup (inside a container).
func joinCgroup(m mount, cg string) string {
	rel := cg
	if m.root != "/" {
		if r, ok := strings.CutPrefix(cg, m.root); ok {
			rel = r
		}
	}
	return path.Join(m.point, rel)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// readCgroup reads the cpuset, cpu and memory limits of pid.
func readCgroup(r *reader, pid int) *Cgroup {
	p := fmt.Sprintf("/proc/%d/cgroup", pid)
	data, ok := r.file(p)
	if !ok {
		return nil
	}
	lines, err := parseProcCgroup(data)
	if err != nil {
		r.fail(inFile(err, p))
	}
	mounts := r.mounts()
	cg := &Cgroup{}
	if dir, v, cgPath := cgroupDir(lines, mounts, "cpu"); dir != "" {
		cg.Version, cg.Path = v, cgPath
		readCPULimits(r, cg, dir, v)
	}
	if dir, v, cgPath := cgroupDir(lines, mounts, "cpuset"); dir != "" {
		if cg.Version == 0 {
			cg.Version, cg.Path = v, cgPath
		}
		readCPUSetLimits(r, cg, dir, v)
	}
	if dir, v, _ := cgroupDir(lines, mounts, "memory"); dir != "" {
		cg.MemoryMax = readMemoryMax(r, dir, v)
	}
	if cg.Version == 0 {
		return nil
	}
	return cg
}

func readCPUSetLimits(r *reader, cg *Cgroup, dir string, v int) {
	if v == 2 {
		cg.CPUs, _ = r.cpuList(dir + "/cpuset.cpus.effective")
		cg.Mems, _ = r.cpuList(dir + "/cpuset.mems.effective")
		return
	}
	if cg.CPUs, _ = r.cpuList(dir + "/cpuset.effective_cpus"); cg.CPUs == nil {
		cg.CPUs, _ = r.cpuList(dir + "/cpuset.cpus")
	}
	if cg.Mems, _ = r.cpuList(dir + "/cpuset.effective_mems"); cg.Mems == nil {
		cg.Mems, _ = r.cpuList(dir + "/cpuset.mems")
	}
}

func readCPULimits(r *reader, cg *Cgroup, dir string, v int) {
	if v == 2 {
		if s, ok := r.str(dir + "/cpu.max"); ok {
			quota, period, err := parseCPUMax(s)
			if err != nil {
				r.fail(&ParseError{Path: dir + "/cpu.max", Line: 1, Err: err})
			}
			cg.CPUQuotaUs, cg.CPUPeriodUs = quota, period
		}
	} else {
		if q, ok := r.int64(dir + "/cpu.cfs_quota_us"); ok && *q >= 0 {
			cg.CPUQuotaUs = q
		}
		cg.CPUPeriodUs, _ = r.int64(dir + "/cpu.cfs_period_us")
	}
	if data, ok := r.file(dir + "/cpu.stat"); ok {
		st, err := parseKeyValues(data)
		if err != nil {
			r.fail(inFile(err, dir+"/cpu.stat"))
		}
		cg.NrPeriods, cg.NrThrottled = st["nr_periods"], st["nr_throttled"]
		cg.ThrottledUs = st["throttled_usec"]
		if ns := st["throttled_time"]; ns != nil && cg.ThrottledUs == nil { // v1 counts ns
			cg.ThrottledUs = u64Ptr(*ns / 1000)
		}
	}
}

// parseCPUMax reads "max 100000" or "200000 100000".
func parseCPUMax(s string) (quota, period *int64, err error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return nil, nil, fmt.Errorf("cpu.max %q is not QUOTA PERIOD", s)
	}
	p, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return nil, nil, fmt.Errorf("cpu.max period %q: %w", f[1], err)
	}
	if f[0] == "max" {
		return nil, &p, nil
	}
	q, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return nil, &p, fmt.Errorf("cpu.max quota %q: %w", f[0], err)
	}
	return &q, &p, nil
}

// unlimitedMemory is the smallest v1 limit taken for "no limit"
// (PAGE_COUNTER_MAX pages is just below 2^63).
const unlimitedMemory = 1 << 62

func readMemoryMax(r *reader, dir string, v int) *uint64 {
	file := dir + "/memory.max"
	if v == 1 {
		file = dir + "/memory.limit_in_bytes"
	}
	s, ok := r.str(file)
	if !ok || s == "max" {
		return nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		r.fail(&ParseError{Path: file, Line: 1, Err: err})
		return nil
	}
	if n >= unlimitedMemory {
		return nil
	}
	return &n
}

// parseKeyValues reads "key value" lines (cpu.stat).
func parseKeyValues(data []byte) (map[string]*uint64, error) {
	out := map[string]*uint64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return out, lineErr(line, "want \"key value\", got %q", clip(sc.Text()))
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return out, lineErr(line, "%s: %q is not a number", f[0], f[1])
		}
		out[f[0]] = &v
	}
	return out, nil
}
