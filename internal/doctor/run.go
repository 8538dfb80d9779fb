package doctor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"redline/internal/host"
)

// Options selects rules.
type Options struct {
	// Only runs just these rules; Skip leaves these out. Both take IDs or
	// shell patterns ("tcp-*", "nic-*").
	Only, Skip []string
}

// Finding is one rule's outcome on one host.
type Finding struct {
	ID       string   `json:"id"`
	Section  string   `json:"section"`
	Severity Severity `json:"severity"`
	Status   Status   `json:"status"`
	Title    string   `json:"title"`
	Why      string   `json:"why"`
	Source   string   `json:"source"`
	// Pid is the redis-server judged, when the host has several and the
	// rule ran once for each.
	Pid int `json:"pid,omitempty"`
	// Node is the cluster node judged (its address, as in Report.Nodes),
	// for a server rule run once per node of a cluster.
	Node string `json:"node,omitempty"`

	Message  string     `json:"message,omitempty"`
	Reason   string     `json:"reason,omitempty"`
	Evidence []Evidence `json:"evidence,omitempty"`
	Fix      *Fix       `json:"fix,omitempty"`
	Notes    []string   `json:"notes,omitempty"`
}

// Report is the outcome of a run: every selected rule's finding, fired
// ones first (most severe first), then the others by section.
type Report struct {
	Target   Target    `json:"target"`
	Findings []Finding `json:"findings"`
	// ReadErrors are what the host snapshot could not read or parse
	// (the rules that read those files say so too).
	ReadErrors []host.SourceError `json:"read_errors,omitempty"`
	// Nodes are a cluster's nodes, each with the error that kept doctor
	// from reading it, if any; empty for a single server.
	Nodes []Node `json:"nodes,omitempty"`
	// Servers are the redis-servers the host snapshot found.
	Servers []ServerSeen  `json:"servers,omitempty"`
	Elapsed time.Duration `json:"-"`
}

// Target says what was examined.
type Target struct {
	Root      string `json:"root"`
	Live      bool   `json:"live"`
	Redis     string `json:"redis,omitempty"`
	Version   string `json:"redis_version,omitempty"`
	RedisNote string `json:"redis_note,omitempty"`
	// RedisError is why the server at the default address was not
	// checked, when the doctor went on with the host alone.
	RedisError string `json:"redis_error,omitempty"`
	Local      bool   `json:"redis_local,omitempty"`
	Pid        int    `json:"redis_pid,omitempty"`
	Interval   string `json:"sample_interval,omitempty"`
	// Cluster is set when the server is a cluster node: Redis is then the
	// seed, and Report.Nodes lists every node.
	Cluster bool `json:"cluster,omitempty"`
}

// ErrNoRules is returned when no rule is registered: the caller forgot the
// blank import of redline/internal/doctor/rules.
var ErrNoRules = errors.New("doctor: no rules registered (import _ \"redline/internal/doctor/rules\")")

// Run checks facts with the selected rules. A rule that panics is reported
// as an error finding; the other rules still run.
func Run(ctx context.Context, f *Facts, o Options) (*Report, error) {
	start := time.Now()
	rules, err := Select(o)
	if err != nil {
		return nil, err
	}
	rep := &Report{Target: targetOf(f), Servers: serversSeen(f)}
	if f.Host != nil {
		rep.ReadErrors = f.Host.Errors
	}
	if f.Cluster != nil {
		rep.Nodes = clusterNodes(f.Cluster)
	}
	for _, r := range rules {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if f.Cluster != nil {
			rep.Findings = append(rep.Findings, runCluster(r, f)...)
			continue
		}
		rep.Findings = append(rep.Findings, runForEachServer(r, f)...)
	}
	sortFindings(rep.Findings)
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// Select returns the rules that o selects. A pattern that matches no rule
// is an error, so a typo does not silently check nothing.
func Select(o Options) ([]Rule, error) {
	all := Rules()
	if len(all) == 0 {
		return nil, ErrNoRules
	}
	for _, p := range append(append([]string{}, o.Only...), o.Skip...) {
		if !matchesAny(all, p) {
			return nil, fmt.Errorf("no rule matches %q (redline doctor --list shows the rule IDs)", p)
		}
	}
	var out []Rule
	for _, r := range all {
		if len(o.Only) > 0 && !match(o.Only, r.ID) || match(o.Skip, r.ID) {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

func matchesAny(rules []Rule, pattern string) bool {
	for _, r := range rules {
		if match([]string{pattern}, r.ID) {
			return true
		}
	}
	return false
}

func match(patterns []string, id string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, id); ok || p == id {
			return true
		}
	}
	return false
}

// runForEachServer runs a process rule once per redis-server when the
// snapshot holds several and none was chosen, so that each is judged and
// not just the first; a network-namespace rule once per namespace those
// servers are in; other rules run once.
func runForEachServer(r Rule, f *Facts) []Finding {
	pids := f.PIDs()
	if r.Needs&NeedRedis != 0 || len(pids) == 0 {
		return []Finding{runRule(r, f)}
	}
	var groups [][]int
	switch {
	case r.Needs&(NeedRedisProcess|PerServer) != 0:
		for _, pid := range pids {
			groups = append(groups, []int{pid})
		}
	case r.Needs&PerNetNS != 0:
		groups = byNetNS(f.Host, pids, false)
	}
	if len(groups) < 2 && r.Needs&(NeedRedisProcess|PerServer) == 0 {
		return []Finding{runRule(r, f)}
	}
	out := make([]Finding, 0, len(groups))
	for _, g := range groups {
		out = append(out, runForServers(r, f, g))
	}
	return out
}

// runForServers judges the servers pids (one, or those sharing a network
// namespace) through the first of them.
func runForServers(r Rule, f *Facts, pids []int) Finding {
	g := *f
	g.Pid, g.eachServer = pids[0], true
	fd := runRule(r, &g)
	fd.Pid = pids[0]
	who := fmt.Sprintf("redis-server pid %d: ", pids[0])
	if len(pids) > 1 {
		who = fmt.Sprintf("redis-servers pids %s (one network namespace): ", joinPIDs(pids))
	}
	labelled(&fd, who)
	return fd
}

// byNetNS groups pids by network namespace, in the order of their first
// server: the inspector's, each other inode. A server whose namespace is
// unknown is on its own, or, with joinUnknown, in the first known one:
// a CombinesNodes rule's fix is one list for a namespace, and a group of
// its own would set a second, conflicting list.
func byNetNS(s *host.Snapshot, pids []int, joinUnknown bool) [][]int {
	keys := make([]string, len(pids))
	first := ""
	for i, pid := range pids {
		keys[i] = netnsKey(s, pid)
		first = cmp.Or(first, keys[i])
	}
	var groups [][]int
	index := map[string]int{}
	for i, pid := range pids {
		key := keys[i]
		switch {
		case key == "" && joinUnknown && first != "":
			key = first
		case key == "":
			key = fmt.Sprint("pid ", pid)
		}
		if j, ok := index[key]; ok {
			groups[j] = append(groups[j], pid)
			continue
		}
		index[key] = len(groups)
		groups = append(groups, []int{pid})
	}
	return groups
}

// netnsKey names pid's network namespace, "" when the snapshot does not
// say which it is.
func netnsKey(s *host.Snapshot, pid int) string {
	if s == nil {
		return ""
	}
	p := s.Process(pid)
	switch {
	case p != nil && p.NetNSIsInspector:
		return "inspector"
	case p != nil && p.NetNS != 0:
		return fmt.Sprint("netns ", p.NetNS)
	}
	return ""
}

func joinPIDs(pids []int) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ",")
}

func runRule(r Rule, f *Facts) (fd Finding) {
	fd = Finding{ID: r.ID, Section: r.Section, Severity: r.Severity, Title: r.Title, Why: r.Why, Source: r.Source}
	if r.Needs&NeedCluster != 0 && f.Cluster == nil && f.HasRedis() {
		fd.Status, fd.Reason = notClustered(f)
		return fd
	}
	if reason := missing(r.Needs, f); reason != "" {
		fd.Status, fd.Reason = NotChecked, reason
		return fd
	}
	defer func() {
		if p := recover(); p != nil {
			fd.Status = Errored
			fd.Reason = fmt.Sprintf("the check panicked: %v (a bug in rule %s; please report it)\n%s", p, r.ID, firstFrames(debug.Stack()))
		}
	}()
	if res, ok := readFailed(r, f); ok {
		fd.Status, fd.Reason = res.Status, res.Reason
		return fd
	}
	f.parseErrs = &parseErrors{} // shared with the copies Servers makes
	res := r.Check(f)
	if err := f.parseError(); err != nil {
		res = Result{Status: Errored, Reason: "could not parse " + err.Error()}
	}
	res = withoutEvidence(r, notInTree(r, f, res))
	fd.Status, fd.Message, fd.Reason = res.Status, res.Message, res.Reason
	fd.Evidence, fd.Fix, fd.Notes = res.Evidence, res.Fix, res.Notes
	if res.Severity != nil {
		fd.Severity = *res.Severity
	}
	if fd.Fix != nil {
		for i := range fd.Fix.Changes {
			fd.Fix.Changes[i].Rule = r.ID
		}
		for i := range fd.Fix.Undo {
			fd.Fix.Undo[i].Rule = r.ID
		}
	}
	return fd
}

// NoEvidence ends the reason of a rule that said ok without showing the
// value its claim rests on: an ok is a claim about the host, and a claim
// without its evidence is reported as not checked.
const NoEvidence = "said ok without showing the values it read"

func withoutEvidence(r Rule, res Result) Result {
	if res.Status != OK {
		return res
	}
	if len(res.Evidence) == 0 {
		return Unchecked("%s (rule %s %s)", res.Message, r.ID, NoEvidence)
	}
	if want := MissingProof(r, res.Evidence); want != "" {
		return Unchecked("%s (rule %s %s: no %s)", res.Message, r.ID, NoEvidence, want)
	}
	return res
}

// MissingProof returns the first entry of r.Proves that no piece
// of evs matches ("" when each is shown).
func MissingProof(r Rule, evs []Evidence) string {
	for _, want := range r.Proves {
		if !slices.ContainsFunc(evs, func(e Evidence) bool { return sourceMatches(want, e.Source) }) {
			return want
		}
	}
	return ""
}

// sourceMatches reports whether src matches one of the "|"-separated
// patterns of want, "*" matching any text, "/" included.
func sourceMatches(want, src string) bool {
	for _, pat := range strings.Split(want, "|") {
		if globMatch(pat, src) {
			return true
		}
	}
	return false
}

func globMatch(pat, s string) bool {
	parts := strings.Split(pat, "*")
	if len(parts) == 1 {
		return pat == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// treeLacks says, for the snapshot probes whose whole source a partial
// capture can lack, what is missing. On a live host these files always
// exist; in a tree their absence says nothing about the kernel.
var treeLacks = map[string]func(*host.Snapshot) string{
	"interrupts": func(s *host.Snapshot) string { return lackIf(len(s.Interrupts.CPUs) == 0, "/proc/interrupts") },
	"nics":       func(s *host.Snapshot) string { return lackIf(!anySysfsNIC(s), "/sys/class/net") },
	"thp":        func(s *host.Snapshot) string { return lackIf(s.THP == nil, "/sys/kernel/mm/transparent_hugepage") },
	"ethtool": func(s *host.Snapshot) string {
		return lackIf(!anyEthtool(s), "ethtool's answers (an ioctl: no capture has them)")
	},
	"sysctls":      func(s *host.Snapshot) string { return lackIf(len(s.Sysctls) == 0, "/proc/sys") },
	"cpu":          func(s *host.Snapshot) string { return lackIf(s.CPU.Online == nil, "/sys/devices/system/cpu") },
	"cpufreq":      func(s *host.Snapshot) string { return lackIf(s.CPU.Online == nil, "/sys/devices/system/cpu") },
	"cpuidle":      func(s *host.Snapshot) string { return lackIf(s.CPU.Online == nil, "/sys/devices/system/cpu") },
	"clocksource":  func(s *host.Snapshot) string { return lackIf(s.Clocksource == nil, "/sys/devices/system/clocksource") },
	"meminfo":      func(s *host.Snapshot) string { return lackIf(s.Memory.MemTotal == nil, "/proc/meminfo") },
	"softnet_stat": func(s *host.Snapshot) string { return lackIf(len(s.Softnet) == 0, "/proc/net/softnet_stat") },
	"netstat":      func(s *host.Snapshot) string { return lackIf(s.Net.TcpExt == nil, "/proc/net/netstat") },
}

// anySysfsNIC: NICs inferred from /proc/interrupts' names (NIC.Inferred)
// do not make up for a tree without /sys/class/net.
func anySysfsNIC(s *host.Snapshot) bool {
	for _, n := range s.NICs {
		if n.Inferred == "" {
			return true
		}
	}
	return false
}

func anyEthtool(s *host.Snapshot) bool {
	for _, n := range s.NICs {
		if n.Ethtool != nil {
			return true
		}
	}
	return false
}

func lackIf(absent bool, what string) string {
	if absent {
		return what
	}
	return ""
}

// notInTree turns a rule's "does not apply here" into "not checked" when
// the fixture tree lacks a source the rule reads: "this kernel has no
// busy polling" is a guess when the tree has no /proc/sys at all.
func notInTree(r Rule, f *Facts, res Result) Result {
	if res.Status != NotApplicable || f.Host == nil || f.Host.Source.Live {
		return res
	}
	var missing []string
	for _, probe := range r.Reads {
		if lacks := treeLacks[probe]; lacks != nil {
			if what := lacks(f.Host); what != "" && !slices.Contains(missing, what) {
				missing = append(missing, what)
			}
		}
	}
	if len(missing) == 0 {
		return res
	}
	return Unchecked("%s absent from this tree", strings.Join(missing, " and "))
}

// readFailed reports a rule whose inputs the snapshot could not read: a
// file that did not parse is an error, one refused (permission) makes the
// rule not checked. Either way the rule does not judge what is left. The
// inputs are the probes the rule reads, and the files of the redis-server
// it judges (processFiles).
func readFailed(r Rule, f *Facts) (Result, bool) {
	files, pid := processFiles(r, f)
	for _, s := range []*host.Snapshot{f.Host, f.Prev} {
		if s == nil {
			continue
		}
		for _, e := range s.Errors {
			if !slices.Contains(r.Reads, e.Source) && !readsProcessFile(e, pid, files) {
				continue
			}
			if isParseError(e) {
				return Result{Status: Errored, Reason: "could not parse " + describeReadError(e)}, true
			}
			if e.Refused() {
				return Unchecked("permission denied reading %s (run as root)", orSource(e)), true
			}
			return Unchecked("could not read %s", describeReadError(e)), true
		}
	}
	return Result{}, false
}

// processFiles returns the files under /proc/PID the rule reads of the
// redis-server it judges, and its pid: a rule that judges a process reads
// its status and its threads (affinity, last CPU), a namespace rule its
// ns/net and net/, and a rule names others in Reads as "proc/PID/FILE"
// ("proc/PID/smaps_rollup").
func processFiles(r Rule, f *Facts) ([]string, int) {
	p := f.RedisProcess()
	if p == nil {
		return nil, 0
	}
	var files []string
	if r.Needs&(NeedRedisProcess|PerServer) != 0 {
		files = append(files, "status", "task/")
	}
	if r.Needs&PerNetNS != 0 {
		files = append(files, "ns/net", "net/")
	}
	for _, rd := range r.Reads {
		if name, ok := strings.CutPrefix(rd, "proc/PID/"); ok {
			files = append(files, name)
		}
	}
	return files, p.PID
}

// readsProcessFile reports whether e is about one of files of process pid.
func readsProcessFile(e host.SourceError, pid int, files []string) bool {
	if pid == 0 || e.Source != fmt.Sprintf("process %d", pid) {
		return false
	}
	prefix := fmt.Sprintf("/proc/%d/", pid)
	i := strings.Index(e.Path, prefix)
	if i < 0 {
		return false
	}
	rest := e.Path[i+len(prefix):]
	for _, name := range files {
		if rest == name || strings.HasSuffix(name, "/") && strings.HasPrefix(rest, name) {
			return true
		}
	}
	return false
}

func orSource(e host.SourceError) string {
	if e.Path != "" {
		return e.Path
	}
	return e.Source
}

// isParseError tells a malformed file from one that could not be read:
// the host's parsers fail with a *host.ParseError.
func isParseError(e host.SourceError) bool {
	var pe *host.ParseError
	return errors.As(e.Err(), &pe)
}

func describeReadError(e host.SourceError) string {
	if e.Path == "" {
		return e.Source + ": " + e.Error
	}
	return e.Path + ": " + e.Error
}

func firstFrames(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	return strings.Join(lines[:min(len(lines), 12)], "\n")
}

// missing says what a rule needs that the facts lack.
func missing(n Need, f *Facts) string {
	switch {
	case n&NeedHost != 0 && f.Host == nil:
		return "no host snapshot"
	case n&NeedCluster != 0 && f.Cluster == nil:
		return redisNote(f)
	case n&NeedRedis != 0 && !f.HasRedis():
		return redisNote(f)
	case n&(NeedRedisProcess|PerServer) != 0 && f.Node != nil && f.HasRedis() && !f.Redis.Process.Local:
		// a PerServer rule would judge this host's CPUs for a node that
		// does not run on them
		return "node on another host: " + f.Redis.Process.Reason
	case n&NeedRedisProcess != 0 && f.RedisProcess() == nil:
		if f.HasRedis() && !f.Redis.Process.Local {
			return "the server is not on this host: " + f.Redis.Process.Reason
		}
		if f.HasRedis() {
			return fmt.Sprintf("redis-server pid %d is not in the host snapshot", f.Redis.Process.Pid)
		}
		return "no redis-server process on this host"
	}
	return ""
}

func redisNote(f *Facts) string {
	if f.RedisNote != "" {
		return "Redis not checked: " + f.RedisNote
	}
	return "Redis not checked: no server"
}

func targetOf(f *Facts) Target {
	t := Target{RedisNote: f.RedisNote}
	if f.Host != nil {
		t.Root, t.Live = f.Host.Source.Root, f.Host.Source.Live
	}
	if f.HasRedis() {
		t.Redis, t.Version = f.Redis.Addr, f.Redis.Version
		t.Local, t.Pid = f.Redis.Process.Local, f.Redis.Process.Pid
	}
	if c := f.Cluster; c != nil {
		t.Redis, t.Cluster = c.Seed, true
		for _, n := range c.Nodes {
			if n.Seed {
				t.Version, t.Local, t.Pid = n.Version, n.Local, n.Pid
			}
		}
	}
	if f.Prev != nil {
		t.Interval = f.Interval.String()
	}
	return t
}

var statusOrder = map[Status]int{Fired: 0, Errored: 1, NotChecked: 2, OK: 3, NotApplicable: 4}

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(a, b int) bool {
		x, y := fs[a], fs[b]
		if statusOrder[x.Status] != statusOrder[y.Status] {
			return statusOrder[x.Status] < statusOrder[y.Status]
		}
		if x.Status == Fired && x.Severity != y.Severity {
			return x.Severity > y.Severity
		}
		if sectionIndex(x.Section) != sectionIndex(y.Section) {
			return sectionIndex(x.Section) < sectionIndex(y.Section)
		}
		return x.ID < y.ID
	})
}

// Fired returns the fired findings at or above min.
func (r *Report) Fired(min Severity) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Status == Fired && f.Severity >= min {
			out = append(out, f)
		}
	}
	return out
}

// notClustered says why a cluster rule did not judge a server: it is not a
// cluster node, or it is one that was checked alone.
func notClustered(f *Facts) (Status, string) {
	if f.Info().ClusterEnabled() {
		return NotChecked, "the server is a cluster node checked alone (--cluster=false): its cluster was not read"
	}
	return NotApplicable, "the server is not a cluster node (INFO cluster_enabled is not 1)"
}
