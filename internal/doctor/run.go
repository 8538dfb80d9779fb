package doctor

import (
	"context"
	"errors"
	"fmt"
	"path"
	"runtime/debug"
	"sort"
	"strings"
	"time"
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

	Message  string     `json:"message,omitempty"`
	Reason   string     `json:"reason,omitempty"`
	Evidence []Evidence `json:"evidence,omitempty"`
	Fix      *Fix       `json:"fix,omitempty"`
	Notes    []string   `json:"notes,omitempty"`
}

// Report is the outcome of a run: every selected rule's finding, fired
// ones first (most severe first), then the others by section.
type Report struct {
	Target   Target        `json:"target"`
	Findings []Finding     `json:"findings"`
	Elapsed  time.Duration `json:"-"`
}

// Target says what was examined.
type Target struct {
	Root      string `json:"root"`
	Live      bool   `json:"live"`
	Redis     string `json:"redis,omitempty"`
	Version   string `json:"redis_version,omitempty"`
	RedisNote string `json:"redis_note,omitempty"`
	Local     bool   `json:"redis_local,omitempty"`
	Pid       int    `json:"redis_pid,omitempty"`
	Interval  string `json:"sample_interval,omitempty"`
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
	rep := &Report{Target: targetOf(f)}
	for _, r := range rules {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rep.Findings = append(rep.Findings, runRule(r, f))
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

func runRule(r Rule, f *Facts) (fd Finding) {
	fd = Finding{ID: r.ID, Section: r.Section, Severity: r.Severity, Title: r.Title, Why: r.Why, Source: r.Source}
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
	res := r.Check(f)
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

func firstFrames(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	return strings.Join(lines[:min(len(lines), 12)], "\n")
}

// missing says what a rule needs that the facts lack.
func missing(n Need, f *Facts) string {
	switch {
	case n&NeedHost != 0 && f.Host == nil:
		return "no host snapshot"
	case n&NeedRedis != 0 && !f.HasRedis():
		return redisNote(f)
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
