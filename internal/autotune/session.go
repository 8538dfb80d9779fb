// Package autotune is the search of redline autotune: it measures the
// baseline and its noise, screens candidate settings against the current
// best in paired, randomly ordered rounds (racing: a candidate is kept as
// soon as its interval clears, dropped as soon as it cannot reach the
// detectable gain), adds the winners one at a time to the incumbent,
// refines numeric knobs, and confirms the final plan against the
// baseline on fresh rounds. Every verdict is stats.ComparePaired's; the
// session's keep decisions share one error budget (Options.Plan). It
// drives the host through a Trialer and journals its state so a session
// can be resumed.
package autotune

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"redline/internal/profiledata"
	"redline/internal/stats"
)

// Phase names the part of a session a comparison belongs to.
type Phase string

// The phases.
const (
	PhaseScreen Phase = "screen"
	PhaseRefine Phase = "refine"
)

// Decision is what a comparison decided.
type Decision string

// The decisions.
const (
	Kept    Decision = "kept"
	Dropped Decision = "dropped"
)

// Trial is one comparison: a candidate config against the incumbent, in
// paired rounds, until a look decided. Its Result is of the objective's
// goodness (the rate, or 1/p99 for a latency objective), so Ratio is the
// candidate's gain: 1.1 for 10% more throughput or a p99 lower by a
// factor 1.1.
type Trial struct {
	N         int              `json:"n"` // 1-based, in the order made
	Phase     Phase            `json:"phase"`
	Setting   Setting          `json:"setting"`
	Against   Config           `json:"against"`
	Config    Config           `json:"config"`
	Rounds    int              `json:"rounds"`
	Result    stats.Comparison `json:"result"`
	Decision  Decision         `json:"decision"`
	Reason    string           `json:"reason"`
	Incumbent Config           `json:"incumbent"` // after the decision
	// Looks is the comparison at every look it reached: the trajectory.
	Looks []Look `json:"looks,omitempty"`
	// P99 is the candidate's p99 at the last look (a bounded session).
	P99 *P99Bound `json:"p99,omitempty"`
}

// Look is a comparison's estimate and interval at one look.
type Look struct {
	Rounds int     `json:"rounds"`
	Ratio  float64 `json:"ratio"`
	CILow  float64 `json:"ci_low,omitempty"`
	CIHigh float64 `json:"ci_high,omitempty"`
	HasCI  bool    `json:"has_ci,omitempty"`
	// P99High is the upper bound of the candidate's median p99 (a
	// bounded session; 0 when too few runs give none).
	P99High float64 `json:"p99_high,omitempty"`
}

// P99Bound is a config's runs' p99 against the bound: their median, the
// one-sided upper bound of the median at the decision's level, and
// whether that bound lies at or below Max.
type P99Bound struct {
	Max    float64 `json:"max"`
	Median float64 `json:"median"`
	High   float64 `json:"high,omitempty"`
	HasCI  bool    `json:"has_ci,omitempty"`
	Within bool    `json:"within"`
}

// Noise is what the baseline against itself showed.
type Noise struct {
	Rounds int `json:"rounds"`
	// Sigma is a robust standard deviation of the paired log-ratios
	// (1.4826 x their median absolute deviation).
	Sigma float64 `json:"sigma"`
	// Detectable is the smallest gain a comparison detects with 95% power
	// by its last look, at the session's level (Detectable).
	Detectable float64          `json:"detectable"`
	AA         stats.Comparison `json:"aa"` // the baseline against itself
	Baseline   float64          `json:"baseline"`
	// BaselineP99 is the median of the baseline's runs' p99 (a bounded
	// session).
	BaselineP99 float64 `json:"baseline_p99,omitempty"`
}

// Confirmation is the final plan against the baseline on fresh rounds.
type Confirmation struct {
	Config    Config           `json:"config"`
	Result    stats.Comparison `json:"result"`
	Confirmed bool             `json:"confirmed"`
	// P99 is the final plan's p99 against the bound, at the
	// confirmation's level (a bounded session: confirmed needs it within).
	P99 *P99Bound `json:"p99,omitempty"`
	// Reason says why a plan was not confirmed.
	Reason string `json:"reason,omitempty"`
	// Baseline and Plan are where the server's time went during one
	// confirmation run of each (nil when the host could not sample).
	Baseline *profiledata.Breakdown `json:"baseline_breakdown,omitempty"`
	Plan     *profiledata.Breakdown `json:"plan_breakdown,omitempty"`
	// BaselineCommands and PlanCommands are the same runs' time by
	// command (INFO commandstats).
	BaselineCommands []CommandTime `json:"baseline_commands,omitempty"`
	PlanCommands     []CommandTime `json:"plan_commands,omitempty"`
}

// Untested is a candidate value the session did not compare, and why.
type Untested struct {
	Setting Setting `json:"setting"`
	Reason  string  `json:"reason"`
}

// Result is a session's outcome, also when it ended early.
type Result struct {
	Plan   Plan    `json:"plan"`
	Noise  Noise   `json:"noise"`
	Trials []Trial `json:"trials"`
	// Final is the incumbent: at the end the plan confirmation measured,
	// in a session that stopped early the plan so far (not confirmed).
	Final        Config        `json:"final"`
	Confirmation *Confirmation `json:"confirmation,omitempty"`
	Untested     []Untested    `json:"untested,omitempty"`
	// Groups are group screening's group tests, and Cleared the values
	// they cleared (not compared alone).
	Groups  []GroupTest    `json:"groups,omitempty"`
	Cleared []ClearedValue `json:"cleared,omitempty"`
	// Unreached is the measurements that would have decided the values
	// untested for the budget (0 when there are none): with the ones
	// made, the budget that would have reached them.
	Unreached int `json:"unreached,omitempty"`
	// Budget is the session's measurement budget (Options.MaxMeasurements;
	// 0: none).
	Budget       int `json:"budget,omitempty"`
	Measurements int `json:"measurements"`
	// Stopped says why the session ended before its end ("" when it did not).
	Stopped string `json:"stopped,omitempty"`
}

type session struct {
	o   Options
	p   Plan
	t   Trialer
	rng *rand.Rand
	j   *journal
	res *Result
	// values is group screening's state of each value (screen.go);
	// groupsLeft the first grouping's groups not yet tested.
	values     map[Setting]*valueState
	groupsLeft int
}

// Run runs a session on t. The host is as found between trials (each
// Trial rolls back); an error or a cancelled ctx ends the session with
// the partial Result and the error.
func Run(ctx context.Context, t Trialer, o Options) (*Result, error) {
	p, err := o.Plan()
	if err != nil {
		return nil, err
	}
	o.Screen = p.Screen != nil // the plan's choice, journaled with the options
	o = o.withDefaults()
	j, err := openJournal(o.Dir, o, o.Resume)
	if err != nil {
		return nil, err
	}
	defer j.close()
	s := &session{o: o, p: p, t: t, j: j, rng: rand.New(rand.NewPCG(o.Seed, 0x6175746f74756e65)), res: &Result{Plan: p, Budget: o.MaxMeasurements}}
	err = s.run(ctx)
	s.res.Unreached = s.unreached()
	if err != nil && s.res.Stopped == "" {
		s.res.Stopped = err.Error()
	}
	return s.res, err
}

func (s *session) run(ctx context.Context) error {
	if err := s.noise(ctx); err != nil {
		return err
	}
	inc, err := Config{}, error(nil)
	if s.p.Screen != nil {
		inc, err = s.screenGroups(ctx, inc)
	} else {
		inc, err = s.screen(ctx, inc)
	}
	if err != nil {
		return err
	}
	if inc, err = s.refine(ctx, inc); err != nil {
		return err
	}
	s.res.Final = inc
	return s.confirm(ctx, inc)
}

// measure runs one trial of c, from the journal when it holds it; the
// Value it returns is the objective's goodness (1/p99 for a latency).
func (s *session) measure(ctx context.Context, c Config, o TrialOptions) (Measurement, error) {
	key := c.String()
	m, ok, err := s.j.replayed(key)
	if err != nil {
		return m, err
	}
	if !ok {
		if m, err = s.trial(ctx, c, o); err != nil {
			return m, err
		}
		if err := s.j.measured(key, m); err != nil {
			return m, err
		}
	}
	s.res.Measurements++
	if s.o.LowerIsBetter {
		m.Value = 1 / m.Value
	}
	return m, nil
}

func (s *session) trial(ctx context.Context, c Config, o TrialOptions) (Measurement, error) {
	if err := ctx.Err(); err != nil {
		return Measurement{}, err
	}
	m, err := s.t.Trial(ctx, c, o)
	if err != nil {
		return m, fmt.Errorf("trial of %s: %w", c, err)
	}
	if !(m.Value > 0) || math.IsInf(m.Value, 0) {
		return m, fmt.Errorf("trial of %s: measured %v, not a positive number", c, m.Value)
	}
	if s.o.P99Max > 0 && (!(m.P99 > 0) || math.IsInf(m.P99, 0)) {
		return m, fmt.Errorf("trial of %s: p99 %v, not a positive number (the p99 bound needs it)", c, m.P99)
	}
	return m, nil
}

// round measures a and b once each, in an order drawn at random, and
// returns their measurements; sample asks for a breakdown of each.
func (s *session) round(ctx context.Context, a, b Config, sample bool) (ma, mb Measurement, err error) {
	o := TrialOptions{Breakdown: sample}
	if s.rng.IntN(2) == 0 {
		if ma, err = s.measure(ctx, a, o); err == nil {
			mb, err = s.measure(ctx, b, o)
		}
		return ma, mb, err
	}
	if mb, err = s.measure(ctx, b, o); err == nil {
		ma, err = s.measure(ctx, a, o)
	}
	return ma, mb, err
}

// noise measures the baseline against itself and states what a
// comparison can detect.
func (s *session) noise(ctx context.Context) error {
	var x, ref, logs, p99s []float64
	for range s.p.NoiseRounds {
		ma, mb, err := s.round(ctx, Config{}, Config{}, false)
		if err != nil {
			return err
		}
		a, b := ma.Value, mb.Value
		x, ref, logs, p99s = append(x, a), append(ref, b), append(logs, math.Log(a/b)), append(p99s, ma.P99, mb.P99)
	}
	med := stats.Median(logs)
	dev := make([]float64, len(logs))
	for i, l := range logs {
		dev[i] = math.Abs(l - med)
	}
	n := &s.res.Noise
	n.Rounds, n.Sigma = len(logs), 1.4826*stats.Median(dev)
	n.Detectable = Detectable(n.Sigma, s.p.Looks[len(s.p.Looks)-1], s.p.LookDesigns[len(s.p.Looks)-1].Level(), 0.95)
	n.AA, _ = stats.ComparePaired(x, ref, true, s.p.LookDesigns[0])
	n.Baseline = stats.Median(append(x, ref...))
	if s.o.P99Max > 0 {
		n.BaselineP99 = stats.Median(p99s)
	}
	return nil
}

// budgetLeft says whether one more comparison fits the budget.
func (s *session) budgetLeft() (bool, string) {
	if len(s.res.Trials) >= s.p.Comparisons {
		return false, fmt.Sprintf("budget: %d comparisons made", len(s.res.Trials))
	}
	if !s.fits(0, s.p.Looks[0]) {
		return false, fmt.Sprintf("budget: %d of %d measurements used", s.res.Measurements, s.o.MaxMeasurements)
	}
	return true, ""
}

// share is the measurements a comparison starting now may take beyond
// its first look: the budget left after the confirmation's reserve,
// split evenly over the comparisons the plan still allows, so that the
// first candidates' long comparisons do not leave the last untested
// (no bound without a budget).
func (s *session) share() int {
	m := s.o.MaxMeasurements
	if m <= 0 {
		return math.MaxInt
	}
	if sp := s.p.Screen; sp != nil {
		// A value a group found takes what the first grouping's untested
		// groups (to their last looks) leave: few values reach a
		// comparison of their own, and each was found moving.
		return m - s.res.Measurements - 2*s.confirmRounds() - 2*s.groupsLeft*sp.Looks[len(sp.Looks)-1]
	}
	left := max(1, s.p.Comparisons-len(s.res.Trials))
	return (m - s.res.Measurements - 2*s.confirmRounds()) / left
}

// fits says whether a comparison at round r may go on to round next
// within the measurement budget, the confirmation's rounds kept in
// reserve (as long as they would be if the comparison kept its setting
// at next). A comparison is started when its first look fits, and ended
// at a look when the next one does not: ending early claims nothing (the
// setting is dropped as not proven), so the error control is unchanged,
// and a budget spent on one long comparison no longer leaves every later
// candidate untested.
func (s *session) fits(r, next int) bool {
	m := s.o.MaxMeasurements
	if m <= 0 {
		return true
	}
	confirm := s.confirmRounds()
	if s.o.ConfirmRounds <= 0 {
		confirm = max(confirm, min(2*next, s.p.MaxConfirmRounds))
	}
	return s.res.Measurements+2*(next-r)+2*confirm <= m
}

// screen compares every candidate value against the incumbent, in the
// candidates' order; a kept one becomes the incumbent at once (forward
// selection), so an interaction with an earlier winner shows as a
// failed addition.
func (s *session) screen(ctx context.Context, inc Config) (Config, error) {
	for _, c := range s.o.Candidates {
		for _, v := range c.Values {
			set := Setting{c.Knob, v}
			if cur, ok := inc.Value(c.Knob); ok && cur == v {
				continue
			}
			if why := c.Requires.unmet(inc); why != "" {
				s.res.Untested = append(s.res.Untested, Untested{set, why})
				continue
			}
			var err error
			if inc, err = s.try(ctx, PhaseScreen, inc, set); err != nil {
				return inc, err
			}
		}
	}
	return inc, nil
}

// refine tries, for each numeric knob of the incumbent, the midpoints
// between its value and its neighbours among the screened values.
func (s *session) refine(ctx context.Context, inc Config) (Config, error) {
	for _, c := range s.o.Candidates {
		cur, ok := inc.Value(c.Knob)
		if !c.Numeric || !ok {
			continue
		}
		for _, v := range midpoints(c.Values, cur) {
			var err error
			if inc, err = s.try(ctx, PhaseRefine, inc, Setting{c.Knob, v}); err != nil {
				return inc, err
			}
		}
	}
	return inc, nil
}

// try races set against inc when the budget allows one more comparison,
// and records it as untested otherwise.
func (s *session) try(ctx context.Context, phase Phase, inc Config, set Setting) (Config, error) {
	if ok, why := s.budgetLeft(); !ok {
		s.res.Untested = append(s.res.Untested, Untested{set, why})
		return inc, nil
	}
	return s.race(ctx, phase, inc, set)
}

// midpoints returns the values halfway between cur and its neighbours in
// the sorted grid (whole numbers when the grid's are), leaving out those
// already in the grid.
func midpoints(grid []string, cur string) []string {
	var nums []float64
	ints := true
	for _, g := range grid {
		f, err := strconv.ParseFloat(g, 64)
		if err != nil {
			return nil
		}
		nums = append(nums, f)
		ints = ints && f == math.Trunc(f)
	}
	slices.Sort(nums)
	c, err := strconv.ParseFloat(cur, 64)
	i := slices.Index(nums, c)
	if err != nil || i < 0 {
		return nil
	}
	var out []string
	for _, nb := range []int{i - 1, i + 1} {
		if nb < 0 || nb >= len(nums) {
			continue
		}
		m := (c + nums[nb]) / 2
		if ints {
			m = math.Round(m)
		}
		if v := strconv.FormatFloat(m, 'f', -1, 64); !slices.Contains(nums, m) {
			out = append(out, v)
		}
	}
	return out
}

// race compares inc with set against inc in paired rounds and decides at
// the planned looks: kept when the interval at the session's level lies
// above 1 (a claim, within the session's error budget) and, in a bounded
// session, the candidate's p99 is shown within the bound at the same
// level; dropped when it lies below 1, when even the upper end of the
// futility interval is below the detectable gain, when its p99 is shown
// above the bound, or at the last look.
func (s *session) race(ctx context.Context, phase Phase, inc Config, set Setting) (Config, error) {
	cand := inc.With(set)
	tr := Trial{N: len(s.res.Trials) + 1, Phase: phase, Setting: set, Against: inc, Config: cand, Incumbent: inc, Decision: Dropped}
	var x, ref, p99s []float64
	last := s.p.Looks[len(s.p.Looks)-1]
	share := s.share()
	for r := 1; r <= last; r++ {
		a, b, err := s.round(ctx, cand, inc, false)
		if err != nil {
			return inc, err
		}
		x, ref, p99s = append(x, a.Value), append(ref, b.Value), append(p99s, a.P99)
		k := slices.Index(s.p.Looks, r)
		if k < 0 {
			continue
		}
		if done := s.decide(&tr, x, ref, p99s, s.p.LookDesigns[k], r == last); done {
			break
		}
		if !s.fits(r, s.p.Looks[k+1]) || 2*s.p.Looks[k+1] > share {
			tr.Reason = fmt.Sprintf("not proven in %d rounds: the budget ends the comparison before its next look (round %d)", r, s.p.Looks[k+1])
			break
		}
	}
	tr.Rounds = len(x)
	if tr.Decision == Kept {
		tr.Incumbent, s.res.Final = cand, cand
	}
	s.res.Trials = append(s.res.Trials, tr)
	if err := s.j.decided(tr); err != nil {
		return inc, err
	}
	if s.o.Progress != nil {
		s.o.Progress(tr)
	}
	return tr.Incumbent, nil
}

// bound is p99s against the session's bound, one-sided at level: the
// chance that a config whose median p99 lies above the bound is called
// within is at most level (MedianCI's two-sided interval at twice it).
func (s *session) bound(p99s []float64, level float64) *P99Bound {
	if s.o.P99Max <= 0 {
		return nil
	}
	b := &P99Bound{Max: s.o.P99Max, Median: stats.Median(p99s)}
	_, b.High, b.HasCI = stats.MedianCI(p99s, 2*level)
	b.Within = b.HasCI && b.High <= b.Max
	return b
}

// decide applies the racing rule at a look; it reports whether the
// comparison is decided.
func (s *session) decide(tr *Trial, x, ref, p99s []float64, d stats.Design, last bool) bool {
	c, _ := stats.ComparePaired(x, ref, true, d)
	tr.Result = c
	tr.P99 = s.bound(p99s, d.Level())
	look := Look{Rounds: len(x), Ratio: c.Ratio, CILow: c.CILow, CIHigh: c.CIHigh, HasCI: c.HasCI}
	if tr.P99 != nil && tr.P99.HasCI {
		look.P99High = tr.P99.High
	}
	tr.Looks = append(tr.Looks, look)
	if c.Outcome == stats.Worse {
		tr.Reason = "it hurts: its interval lies below 1"
		return true
	}
	if tr.P99 != nil {
		if lo, _, ok := stats.MedianCI(p99s, futilityLevel); ok && lo > s.o.P99Max {
			tr.Reason = fmt.Sprintf("its p99 breaks the bound: the lower end of its median's %.0f%% interval is %.4g, above %.4g", 100*(1-futilityLevel), lo, s.o.P99Max)
			return true
		}
	}
	if c.Outcome == stats.Better && (tr.P99 == nil || tr.P99.Within) {
		tr.Decision, tr.Reason = Kept, "its interval lies above 1 at the session's level"
		if tr.P99 != nil {
			tr.Reason += fmt.Sprintf(", and its median p99 is at most %.4g at that level (bound %.4g)", tr.P99.High, s.o.P99Max)
		}
		return true
	}
	f, _ := stats.ComparePaired(x, ref, true, stats.Design{Alpha: futilityLevel, Comparisons: 1, Looks: 1, Paired: true})
	if goal := min(s.res.Noise.Detectable, s.o.MinGain); c.Outcome != stats.Better && f.HasCI && f.CIHigh < 1+goal {
		tr.Reason = fmt.Sprintf("it cannot reach the gain sought (%.1f%%): the upper end of its %.0f%% interval is x%.3f", 100*goal, 100*(1-futilityLevel), f.CIHigh)
		return true
	}
	if last {
		tr.Reason = fmt.Sprintf("not proven in %d rounds", len(x))
		if c.Outcome == stats.Better {
			tr.Reason = fmt.Sprintf("its gain is proven but its p99 is not shown within the bound %.4g in %d rounds", s.o.P99Max, len(x))
		}
		return true
	}
	return false
}

// confirmRounds is the confirmation's length: the planned rounds, or
// when they were left to the default, as many as the longest comparison
// that kept a setting took, twice over, if more.
func (s *session) confirmRounds() int {
	n := s.p.ConfirmRounds
	if s.o.ConfirmRounds > 0 {
		return n
	}
	for _, t := range s.res.Trials {
		if t.Decision == Kept {
			n = max(n, 2*t.Rounds)
		}
	}
	return min(n, s.p.MaxConfirmRounds)
}

// confirm measures the final config against the baseline on fresh
// rounds, with an error budget of its own; the first round also breaks
// down where the server's time went for each.
func (s *session) confirm(ctx context.Context, final Config) error {
	if len(final) == 0 {
		return nil
	}
	cf := &Confirmation{Config: final}
	var x, ref, p99s []float64
	for i := range s.confirmRounds() {
		a, b, err := s.round(ctx, final, Config{}, i == 0)
		if err != nil {
			return err
		}
		if i == 0 {
			cf.Plan, cf.Baseline = a.Breakdown, b.Breakdown
			cf.PlanCommands, cf.BaselineCommands = a.Commands, b.Commands
		}
		x, ref, p99s = append(x, a.Value), append(ref, b.Value), append(p99s, a.P99)
	}
	cf.Result, _ = stats.ComparePaired(x, ref, true, s.p.Confirm)
	cf.P99 = s.bound(p99s, s.p.Confirm.Level())
	switch {
	case cf.Result.Outcome != stats.Better:
		cf.Reason = "its interval against the baseline does not lie above 1"
	case cf.P99 != nil && !cf.P99.Within:
		cf.Reason = fmt.Sprintf("its median p99 is not shown at or below the bound %.4g (upper bound %.4g)", cf.P99.Max, cf.P99.High)
	default:
		cf.Confirmed = true
	}
	s.res.Confirmation = cf
	return nil
}
