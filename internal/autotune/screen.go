package autotune

// Group screening (Options.Screen; docs/autotune.md). Most knobs of a
// catalog do nothing on a given host (effect sparsity), so comparing
// every value alone spends the budget on nulls: a session of the default
// budget reached a third of the catalog (issue 36). Here the values are
// applied in groups, a group being one configuration (run-time changes
// and start-up settings alike: the trialer applies a configuration), and
// compared with the incumbent in the same paired, randomly ordered
// rounds, at looks 7, 14 and 32:
//
//   - a group whose interval's upper end lies at or below 1 + ClearGain
//     clears its members at once ("no gain larger than 7% together"); one
//     that loses, by less than ClearGain, clears too;
//   - a group whose interval lies above 1 (it moves), or below
//     1/(1+ClearGain) (a loss that large could hide a gain), or that is
//     still unclear at its last look with its estimate past half the gain
//     sought, is split in halves (bifurcation) until the value
//     responsible is compared alone, by the same racing comparison, at
//     the same level, as a session without groups; when the first half
//     of a group that moved up clears, the second holds the gain and is
//     split without a test of its own; an unclear group that does not
//     lean up is cleared with the wider bound its interval shows (said).
//
// Errors. A value is kept only by a comparison of that value alone on
// rounds of its own (never the group's), at the level of the session's
// Bonferroni split over the single comparisons it may make (at most
// Options.MaxCandidates, fixed before the first measurement); the group
// tests only steer which values reach one. So the chance that a session
// whose values all do nothing keeps any stays at most Alpha, whatever the
// groups did. Clearing is a claim too: its interval, at the two-sided
// level 2 x ClearAlpha split evenly over the group's looks, puts the
// chance that a group whose members together gain more than the bound it
// states is cleared at most ClearAlpha.
//
// Sign cancellation and interactions. A helpful and a harmful value in
// one group can cancel: the group then shows nothing, and "no gain
// larger than X together" is true of the group but not of its members.
// So, budget permitting, the values the first grouping cleared are
// grouped again such that no two values that shared a group share one
// again (a fold-over: the first grouping's rows become columns). Two
// values that cancel in one grouping are in different groups in the
// other, where each moves its own group and is found; a gain stays
// hidden only when, in each grouping, another value cancels it within
// the clearing bound. Each cleared value says in how many groupings it
// was cleared. A kept value joins the incumbent at once, so a second fix
// of a bottleneck the first removed clears. An effect that needs two
// values together (neither moves alone) moves its group, but bifurcation
// tests the halves apart and clears both: not found.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"redline/internal/stats"
)

// The group tests' decisions (GroupTest.Decision).
const (
	Cleared   Decision = "cleared"
	Split     Decision = "split"
	Undecided Decision = "undecided"
)

// ScreenPlan is group screening's part of the plan: the groups, fixed
// before the first measurement, and the group tests' design.
type ScreenPlan struct {
	// Singles are compared alone before any group (EvidenceNow); Groups
	// is the first grouping; Deferred are values whose requirement the
	// target as found does not meet, compared alone after the groups
	// (when the incumbent meets it then).
	Singles  []Setting   `json:"singles,omitempty"`
	Groups   [][]Setting `json:"groups"`
	Deferred []Setting   `json:"deferred,omitempty"`
	// Looks are a group test's looks (rounds); Designs[k] the interval
	// look k uses (its Level is two-sided): ClearAlpha one-sided, split
	// evenly over the looks.
	Looks     []int          `json:"looks"`
	Designs   []stats.Design `json:"designs"`
	ClearGain float64        `json:"clear_gain"`
	GroupSize int            `json:"group_size"`
}

// GroupTests bounds the group tests of a session: bifurcation tests at
// most n-1 subsets of a group of n, in each of the two groupings.
func (sp *ScreenPlan) GroupTests() int {
	n := 0
	for _, g := range sp.Groups {
		n += 2 * max(len(g)-1, 1)
	}
	return n
}

// Values is the count of candidate values the plan screens.
func (sp *ScreenPlan) Values() int {
	n := len(sp.Singles) + len(sp.Deferred)
	for _, g := range sp.Groups {
		n += len(g)
	}
	return n
}

// GroupTest is one group of values against the incumbent.
type GroupTest struct {
	N        int              `json:"n"`    // 1-based, in the order made
	Pass     int              `json:"pass"` // 1: the first grouping, 2: the fold-over
	Members  Config           `json:"members"`
	Against  Config           `json:"against"`
	Rounds   int              `json:"rounds"`
	Result   stats.Comparison `json:"result"`
	Looks    []Look           `json:"looks,omitempty"`
	Decision Decision         `json:"decision"`
	// Bound is a cleared group's: no gain larger than Bound (0.07 for
	// 7%) together at the clearing level; below 0, a loss of at least
	// -Bound.
	Bound  float64 `json:"bound,omitempty"`
	Reason string  `json:"reason"`
}

// ClearedValue is a value cleared in a group: no gain larger than Bound
// together with its group (the largest of its groupings'; below 0 a loss
// of at least -Bound); Groupings is how many groupings (1 or 2) cleared
// it, Group the last group test that did.
type ClearedValue struct {
	Setting   Setting `json:"setting"`
	Group     int     `json:"group"`
	Bound     float64 `json:"bound"`
	Groupings int     `json:"groupings"`
	// Hurts: the value alone moved the result down (its interval below
	// 1 at the group tests' level; Bound is the loss at least).
	Hurts bool `json:"hurts,omitempty"`
}

// Reason is the value's line: "cleared in group 3 (no effect larger than
// 7.2% together; 2 groupings)".
func (c ClearedValue) Reason() string {
	if c.Hurts {
		return fmt.Sprintf("rejected by group test %d: it hurts alone, by %.1f%% at least", c.Group, 100*c.Bound)
	}
	g := "in one grouping: the budget did not reach the fold-over"
	if c.Groupings > 1 {
		g = "in both groupings"
	}
	if c.Bound < 0 {
		return fmt.Sprintf("cleared by group test %d: no gain together, a loss of %.1f%% at least (%s)", c.Group, -100*c.Bound, g)
	}
	return fmt.Sprintf("cleared by group test %d: no gain larger than %.1f%% together (%s)", c.Group, 100*c.Bound, g)
}

// screenPlan groups the candidate values: one value of a knob a group,
// no two conflicting knobs, and no value beside a setting that idles the
// knob it requires; a candidate's values go to different groups
// (round-robin in the catalog's order), so a numeric knob's grid is
// spread over the groups.
func (o Options) screenPlan() (*ScreenPlan, error) {
	sp := &ScreenPlan{ClearGain: o.ClearGain, GroupSize: max(o.GroupSize, 2)}
	byKnob := map[string]Candidate{}
	var vals []Setting
	for _, c := range o.Candidates {
		byKnob[c.Knob] = c
		for i, v := range c.Values {
			set := Setting{c.Knob, v}
			switch {
			case c.Evidence == EvidenceNow && i == 0:
				sp.Singles = append(sp.Singles, set)
			case c.Requires.unmet(Config{}) != "":
				sp.Deferred = append(sp.Deferred, set)
			default:
				vals = append(vals, set)
			}
		}
	}
	sp.Groups = assignGroups(vals, sp.GroupSize, (len(vals)+sp.GroupSize-1)/sp.GroupSize, nil, compatible(byKnob))
	// The group tests' looks: the fewest rounds with which an interval
	// at the clearing level exists, to GroupRounds.
	minRounds := 2
	for range 8 {
		sp.Looks = doublingLooks(minRounds, max(o.GroupRounds, minRounds))
		sp.Designs = lookDesigns(2*o.ClearAlpha, 1, len(sp.Looks), 1/float64(len(sp.Looks)))
		minRounds = max(minRounds, sp.Designs[0].RunsNeeded())
	}
	if need := sp.Designs[0].RunsNeeded(); sp.Looks[0] < need {
		return nil, fmt.Errorf("autotune: %d rounds a group can never clear it; raise the group rounds to at least %d", o.GroupRounds, need)
	}
	return sp, nil
}

// doublingLooks are a group test's looks: first, twice it, four times
// ..., and last. Few looks keep each look's interval narrow (a group on
// a quiet host clears at its first; a noisy one needs the last).
func doublingLooks(first, last int) []int {
	looks := []int{first}
	for n := 2 * first; float64(last) >= 1.5*float64(n); n *= 2 {
		looks = append(looks, n)
	}
	if looks[len(looks)-1] != last {
		looks = append(looks, last)
	}
	return looks
}

// compatible says whether v may join group.
func compatible(byKnob map[string]Candidate) func(group []Setting, v Setting) bool {
	idles := func(a, b Setting) bool { // a's requirement idled by b
		r := byKnob[a.Knob].Requires
		return r != nil && r.Knob == b.Knob && b.Value == r.Idle
	}
	return func(group []Setting, v Setting) bool {
		for _, m := range group {
			if m.Knob == v.Knob || slices.Contains(byKnob[m.Knob].Conflicts, v.Knob) || slices.Contains(byKnob[v.Knob].Conflicts, m.Knob) ||
				idles(m, v) || idles(v, m) {
				return false
			}
		}
		return true
	}
}

// assignGroups puts vals, in order, into n groups of at most size: each
// value into the first group, from its round-robin turn (or from
// start(v) when given), that has room and is compatible; a new group
// when none is.
func assignGroups(vals []Setting, size, n int, start func(i int, v Setting) int, ok func([]Setting, Setting) bool) [][]Setting {
	groups := make([][]Setting, max(n, 1))
	for i, v := range vals {
		first := i
		if start != nil {
			first = start(i, v)
		}
		placed := false
		for j := range groups {
			g := &groups[(first+j)%len(groups)]
			if len(*g) < size && ok(*g, v) {
				*g, placed = append(*g, v), true
				break
			}
		}
		if !placed {
			groups = append(groups, []Setting{v})
		}
	}
	return slices.DeleteFunc(groups, func(g []Setting) bool { return len(g) == 0 })
}

// valueState is what group screening knows of one value.
type valueState struct {
	cleared ClearedValue // Groupings > 0: cleared
	alone   bool         // compared alone (a Trial), or left untested
	pass1   int          // its group in the first grouping (index)
}

// screenGroups is the screening phase with groups: the singles, the
// first grouping, the deferred values, the fold-over of what the first
// grouping cleared (as far as the budget goes), in that order; a kept
// value joins the incumbent at once, as in the one-at-a-time screen.
func (s *session) screenGroups(ctx context.Context, inc Config) (Config, error) {
	sp := s.p.Screen
	s.values = map[Setting]*valueState{}
	var err error
	for _, set := range sp.Singles {
		if inc, err = s.alone(ctx, inc, set); err != nil {
			return inc, err
		}
	}
	for gi, g := range sp.Groups {
		for _, v := range g {
			s.values[v] = &valueState{pass1: gi}
		}
	}
	for i, g := range sp.Groups {
		s.groupsLeft = len(sp.Groups) - i - 1
		if inc, err = s.node(ctx, inc, g, 1, false); err != nil {
			return inc, err
		}
	}
	for _, set := range sp.Deferred {
		if inc, err = s.alone(ctx, inc, set); err != nil {
			return inc, err
		}
	}
	if inc, err = s.foldOver(ctx, inc); err != nil {
		return inc, err
	}
	for _, g := range sp.Groups {
		for _, v := range g {
			if st := s.values[v]; st.cleared.Groupings > 0 && !st.alone {
				s.res.Cleared = append(s.res.Cleared, st.cleared)
			}
		}
	}
	return inc, nil
}

// foldOver groups the values the first grouping cleared again, no two
// that shared a group together, and screens those groups.
func (s *session) foldOver(ctx context.Context, inc Config) (Config, error) {
	var vals []Setting
	pos := map[Setting]int{}
	for _, g := range s.p.Screen.Groups {
		for i, v := range g {
			if st := s.values[v]; st.cleared.Groupings == 1 && !st.alone && !st.cleared.Hurts {
				vals, pos[v] = append(vals, v), i
			}
		}
	}
	if len(vals) < 2 {
		return inc, nil
	}
	byKnob := map[string]Candidate{}
	for _, c := range s.o.Candidates {
		byKnob[c.Knob] = c
	}
	ok := compatible(byKnob)
	apart := func(g []Setting, v Setting) bool {
		return ok(g, v) && !slices.ContainsFunc(g, func(m Setting) bool { return s.values[m].pass1 == s.values[v].pass1 })
	}
	widest := 0
	for _, g := range s.p.Screen.Groups {
		widest = max(widest, len(g))
	}
	n := max(widest, (len(vals)+s.p.Screen.GroupSize-1)/s.p.Screen.GroupSize)
	groups := assignGroups(vals, s.p.Screen.GroupSize, n, func(_ int, v Setting) int { return pos[v] }, apart)
	var err error
	for _, g := range groups {
		if len(g) < 2 {
			continue // alone in the fold-over: nothing to separate it from
		}
		if inc, err = s.node(ctx, inc, g, 2, false); err != nil {
			return inc, err
		}
	}
	return inc, nil
}

// alone compares one value alone (the keep decision), or lists it
// untested when the incumbent has it or its requirement is unmet.
func (s *session) alone(ctx context.Context, inc Config, set Setting) (Config, error) {
	if st := s.values[set]; st != nil {
		st.alone = true
	}
	if cur, ok := inc.Value(set.Knob); ok && cur == set.Value {
		return inc, nil
	}
	if why := s.requires(set.Knob).unmet(inc); why != "" {
		s.res.Untested = append(s.res.Untested, Untested{set, why})
		return inc, nil
	}
	return s.try(ctx, PhaseScreen, inc, set)
}

func (s *session) requires(knob string) *Requirement {
	for _, c := range s.o.Candidates {
		if c.Knob == knob {
			return c.Requires
		}
	}
	return nil
}

// node screens members against inc. A group (or a single value whose
// group moved) is tested unless it is known to hold what moved its
// parent (its sibling cleared), and is cleared, or split in halves
// screened in turn; a single value that moved up, or stayed unclear, is
// compared alone on fresh rounds (the keep decision); one that moved
// down is rejected (it hurts: a claim of harm keeps nothing).
func (s *session) node(ctx context.Context, inc Config, members []Setting, pass int, moved bool) (Config, error) {
	var live []Setting
	for _, m := range members {
		if cur, ok := inc.Value(m.Knob); ok && cur == m.Value {
			continue // the incumbent has it
		}
		if why := s.requires(m.Knob).unmet(inc); why != "" {
			if st := s.values[m]; st != nil && st.cleared.Groupings == 0 && !st.alone {
				st.alone = true
				s.res.Untested = append(s.res.Untested, Untested{m, why})
			}
			continue
		}
		live = append(live, m)
	}
	if len(live) == 0 {
		return inc, nil
	}
	if len(live) == 1 && moved {
		return s.alone(ctx, inc, live[0])
	}
	if !moved {
		g, err := s.groupTest(ctx, inc, live, pass)
		if err != nil {
			return inc, err
		}
		switch {
		case g.Decision == Cleared:
			for _, m := range live {
				st := s.values[m]
				bound := g.Bound
				if st.cleared.Groupings > 0 {
					bound = max(bound, st.cleared.Bound)
				}
				st.cleared = ClearedValue{Setting: m, Group: g.N, Bound: bound, Groupings: st.cleared.Groupings + 1}
			}
			return inc, nil
		case g.Decision == Undecided:
			for _, m := range live {
				if st := s.values[m]; st.cleared.Groupings == 0 && !st.alone {
					st.alone = true
					s.res.Untested = append(s.res.Untested, Untested{m, g.Reason})
				}
			}
			return inc, nil
		case len(live) == 1 && g.Result.HasCI && g.Result.CIHigh < 1:
			st := s.values[live[0]]
			st.cleared = ClearedValue{Setting: live[0], Group: g.N, Bound: 1/g.Result.CIHigh - 1, Groupings: st.cleared.Groupings + 1, Hurts: true}
			return inc, nil
		case len(live) == 1:
			return s.alone(ctx, inc, live[0])
		}
		// A group that moved up holds a gain: when its first half clears,
		// the second holds it and is split at once. One that moved down,
		// or stayed unclear, has both halves tested.
		moved = g.Result.HasCI && g.Result.CILow > 1
	}
	var err error
	half := len(live) / 2
	before := inc
	if inc, err = s.node(ctx, inc, live[:half], pass, false); err != nil {
		return inc, err
	}
	firstCleared := moved && slices.Equal(before, inc) && !slices.ContainsFunc(live[:half], func(m Setting) bool {
		st := s.values[m]
		return st.alone || st.cleared.Hurts || st.cleared.Groupings < pass
	})
	return s.node(ctx, inc, live[half:], pass, firstCleared)
}

// groupTest compares inc with every member applied against inc in paired
// rounds and decides at the group looks: cleared when the interval lies
// within ±ClearGain, split when it lies above or below 1 or at the last
// look, undecided when the budget ends it.
func (s *session) groupTest(ctx context.Context, inc Config, members []Setting, pass int) (GroupTest, error) {
	sp := s.p.Screen
	cand := inc
	for _, m := range members {
		cand = cand.With(m)
	}
	g := GroupTest{N: len(s.res.Groups) + 1, Pass: pass, Members: Config{}.With(members[0]), Against: inc}
	for _, m := range members[1:] {
		g.Members = g.Members.With(m)
	}
	last := sp.Looks[len(sp.Looks)-1]
	hi := 1 + sp.ClearGain
	var x, ref []float64
	if !s.fits(0, sp.Looks[0]) {
		g.Decision, g.Reason = Undecided, fmt.Sprintf("budget: %d of %d measurements used", s.res.Measurements, s.o.MaxMeasurements)
	}
	for r := 1; g.Decision == "" && r <= last; r++ {
		a, b, err := s.round(ctx, cand, inc, false)
		if err != nil {
			return g, err
		}
		x, ref = append(x, a.Value), append(ref, b.Value)
		k := slices.Index(sp.Looks, r)
		if k < 0 {
			continue
		}
		c, _ := stats.ComparePaired(x, ref, true, sp.Designs[k])
		g.Result = c
		g.Looks = append(g.Looks, Look{Rounds: r, Ratio: c.Ratio, CILow: c.CILow, CIHigh: c.CIHigh, HasCI: c.HasCI})
		switch {
		case !c.HasCI:
		case c.CILow > 1:
			g.Decision, g.Reason = Split, "it moves: its interval lies above 1"
		case c.CIHigh <= hi && c.CIHigh >= 1:
			g.Decision, g.Bound = Cleared, c.CIHigh-1
			g.Reason = fmt.Sprintf("no gain larger than %.1f%% together (the upper end of its %.2f%% interval)", 100*g.Bound, 100*(1-c.Level))
		case c.CIHigh < 1/hi && len(members) > 1:
			g.Decision, g.Reason = Split, fmt.Sprintf("it loses more than %.0f%%: a gain could hide behind the loss (its interval lies below x%.3f)", 100*sp.ClearGain, 1/hi)
		case c.CIHigh < 1:
			g.Decision, g.Bound = Cleared, c.CIHigh-1
			g.Reason = fmt.Sprintf("no gain together: it loses %.1f%% at least (the upper end of its %.2f%% interval)", 100*(1-c.CIHigh), 100*(1-c.Level))
		case r == last && c.Ratio > 1+sp.ClearGain/2:
			g.Decision, g.Reason = Split, fmt.Sprintf("unclear in %d rounds, leaning up (x%.3f, past half the gain sought): its interval reaches above a gain of %.0f%%", r, c.Ratio, 100*sp.ClearGain)
		case r == last:
			// A group that is only noisy would stay as unclear split: it is
			// cleared with the bound its interval gives, stated.
			g.Decision, g.Bound = Cleared, c.CIHigh-1
			g.Reason = fmt.Sprintf("no gain larger than %.1f%% together (the upper end of its %.2f%% interval; wider than the %.0f%% sought: a noisy host)", 100*g.Bound, 100*(1-c.Level), 100*sp.ClearGain)
		case !s.fits(r, sp.Looks[k+1]):
			g.Decision, g.Reason = Undecided, fmt.Sprintf("budget: %d of %d measurements used", s.res.Measurements, s.o.MaxMeasurements)
		}
	}
	g.Rounds = len(x)
	s.res.Groups = append(s.res.Groups, g)
	if err := s.j.grouped(g); err != nil {
		return g, err
	}
	if s.o.OnGroup != nil {
		s.o.OnGroup(g)
	}
	return g, nil
}

// Estimate is what the plan says before the first measurement: how many
// of the candidate values the budget reaches and what budget decides
// them all (measurements of the session; the caller turns them into
// time).
type Estimate struct {
	Values int `json:"values"`
	// Reached is the values the budget decides in the worst case of a
	// host where nothing moves: every comparison (or group test) to its
	// last look; ReachedBest when each decides at its first look.
	Reached     int `json:"reached"`
	ReachedBest int `json:"reached_best"`
	// All is the measurements that decide every value in that worst
	// case, the noise and a confirmation included; PerFound what each
	// value a group finds adds at most (its bifurcation's tests and its
	// comparison, to their last looks).
	All      int `json:"all"`
	PerFound int `json:"per_found,omitempty"`
	// FoldOver is the measurements the second grouping adds at most.
	FoldOver int `json:"fold_over,omitempty"`
}

// Estimate states what a budget of max measurements (0: none) reaches.
func (p Plan) Estimate(maxMeasurements int) Estimate {
	last, first := p.Looks[len(p.Looks)-1], p.Looks[0]
	fixed := 2 * (p.NoiseRounds + p.ConfirmRounds)
	e := Estimate{Values: p.Screening}
	left := func(used int) int {
		if maxMeasurements <= 0 {
			return math.MaxInt / 4
		}
		return maxMeasurements - used
	}
	if p.Screen == nil {
		e.All = fixed + 2*p.Screening*last
		e.Reached = min(p.Screening, p.Comparisons, max(0, left(fixed)/(2*last)))
		e.ReachedBest = min(p.Screening, p.Comparisons, max(0, left(fixed)/(2*first)))
		return e
	}
	sp := p.Screen
	glast, gfirst := sp.Looks[len(sp.Looks)-1], sp.Looks[0]
	e.Values = sp.Values()
	reach := func(cost, alone int) int {
		used, n := fixed, 0
		for range sp.Singles {
			if used += 2 * alone; used > left(0) {
				return n
			}
			n++
		}
		for _, g := range sp.Groups {
			if used += 2 * cost; used > left(0) {
				return n
			}
			n += len(g)
		}
		for range sp.Deferred {
			if used += 2 * alone; used > left(0) {
				return n
			}
			n++
		}
		return n
	}
	e.Reached, e.ReachedBest = reach(glast, last), reach(gfirst, first)
	e.All = fixed + 2*(len(sp.Singles)+len(sp.Deferred))*last + 2*len(sp.Groups)*glast
	depth := int(math.Ceil(math.Log2(float64(max(sp.GroupSize, 2)))))
	e.PerFound = 2 * (depth*glast + last)
	widest := 0
	for _, g := range sp.Groups {
		widest = max(widest, len(g))
	}
	e.FoldOver = 2 * widest * glast
	return e
}

// unreached is the measurements that would have decided the values left
// untested for the budget: each compared alone to its last look, or,
// with groups, in groups of the plan's size to their last look.
func (s *session) unreached() int {
	n := 0
	for _, u := range s.res.Untested {
		if strings.HasPrefix(u.Reason, "budget") {
			n++
		}
	}
	if n == 0 {
		return 0
	}
	last := s.p.Looks[len(s.p.Looks)-1]
	if sp := s.p.Screen; sp != nil {
		return 2 * ((n + sp.GroupSize - 1) / sp.GroupSize) * sp.Looks[len(sp.Looks)-1]
	}
	return 2 * n * last
}
