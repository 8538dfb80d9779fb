package autotune

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"redline/internal/stats"
)

// Candidate is a knob and the values the search screens it at.
type Candidate struct {
	Knob   string   `json:"knob"`
	Values []string `json:"values"`
	// Numeric knobs are refined around their kept value: the midpoints
	// between it and its neighbours in Values are tried too.
	Numeric bool `json:"numeric,omitempty"`
	// Requires, when set, is the knob without which this one does
	// nothing: its values are compared only while the incumbent (or the
	// target as found) has that knob at another value than Idle, and are
	// listed untested otherwise, spending nothing.
	Requires *Requirement `json:"requires,omitempty"`
	// Conflicts names knobs this one must not share a configuration with
	// (group screening never puts them in one group: two knobs that write
	// the same setting, say).
	Conflicts []string `json:"conflicts,omitempty"`
	// Evidence ranks the candidate in group screening: EvidenceNow (a
	// problem its first value fixes is happening during the session, a
	// counter's rate sampled over the baseline) has its first value
	// compared alone before any group; anything else is screened in the
	// groups, whatever a one-sample counter said (screen.go).
	Evidence string `json:"evidence,omitempty"`
}

// EvidenceNow marks a candidate whose first value fixes a problem
// measured as happening now (Candidate.Evidence).
const EvidenceNow = "now"

// Requirement: Knob at any value but Idle. Baseline is Knob's value on
// the target as found (what the incumbent has when it does not set it).
type Requirement struct {
	Knob     string `json:"knob"`
	Idle     string `json:"idle"`
	Baseline string `json:"baseline"`
}

// unmet says why the requirement is not met by inc ("" when it is).
func (r *Requirement) unmet(inc Config) string {
	if r == nil {
		return ""
	}
	v, ok := inc.Value(r.Knob)
	if !ok {
		v = r.Baseline
	}
	if v == "" || v == r.Idle {
		return fmt.Sprintf("does nothing while %s is %s (the incumbent's)", r.Knob, cmp.Or(v, r.Idle))
	}
	return ""
}

// Options control a session. The zero value of each field is its default.
type Options struct {
	Candidates []Candidate `json:"candidates"`
	// Alpha is the family-wise error rate of the session's keep
	// decisions: the chance that a session whose candidates all do nothing
	// keeps any of them. Default 0.05.
	Alpha float64 `json:"alpha"`
	// ConfirmAlpha is the chance that confirmation calls a plan that does
	// nothing "confirmed". Default 0.05.
	ConfirmAlpha float64 `json:"confirm_alpha"`
	// MinRounds and MaxRounds bound the paired rounds of one comparison
	// (defaults: the fewest with which a claim is possible at the
	// session's level, at least 8; and DefaultMaxRounds, or with
	// MaxMeasurements a quarter of its rounds, so that the noise, two
	// comparisons to their last look and the confirmation fit: a noisy
	// host needs the rounds, a quiet one decides at the first looks).
	MinRounds int `json:"min_rounds"`
	MaxRounds int `json:"max_rounds"`
	// NoiseRounds of the baseline against itself come first (default:
	// the first look's rounds); ConfirmRounds of the final plan against
	// the baseline come last (default: twice the first look's, or twice
	// the rounds of the longest comparison that kept a setting, if more,
	// at most MaxRounds: a plan that took many rounds to prove needs more
	// to confirm at its own level; the count is fixed before the first
	// confirmation round).
	NoiseRounds   int `json:"noise_rounds"`
	ConfirmRounds int `json:"confirm_rounds"`
	// MaxCandidates is the most comparisons a session makes (screening
	// and refinement; each may keep). Default 25.
	MaxCandidates int `json:"max_candidates"`
	// MaxMeasurements, when set, bounds the session's measurements, the
	// confirmation's kept in reserve: a comparison starts when its first
	// look fits and ends (not proven) at a look when its next does not.
	MaxMeasurements int `json:"max_measurements"`
	// MinGain is the gain below which a change is not worth keeping
	// (default 0.03): racing drops a candidate once the upper end of its
	// interval lies below 1 + the smaller of MinGain and the noise's
	// detectable gain (a noise estimate from a few rounds can be far too
	// high on a busy host; this bound keeps it from dropping real gains).
	MinGain float64 `json:"min_gain"`
	// LowerIsBetter says the objective is a latency (p99), not a rate.
	LowerIsBetter bool `json:"lower_is_better,omitempty"`
	// P99Max, when set, bounds the p99 of a throughput objective (in the
	// unit of Measurement.P99): a setting is kept, and a plan confirmed,
	// only when its gain is proven AND the median of its runs' p99 is
	// shown at or below the bound, at the same level as the gain (the
	// upper end of the order-statistic bound of the median, one-sided).
	// The chance that a session keeps a setting whose median p99 is
	// above the bound is then at most Alpha as well (docs/autotune.md).
	P99Max float64 `json:"p99_max,omitempty"`
	// LastLookShare is the share of a comparison's error budget its last
	// look takes (the earlier looks split the rest evenly); default
	// DefaultLastLookShare. 0 < share < 1; a comparison with one look
	// takes it all.
	LastLookShare float64 `json:"last_look_share,omitempty"`
	// Screen turns on group screening (screen.go; a session with a
	// budget too small for every value alone turns it on, Plan): the candidate values
	// are applied in groups, one configuration a group; a group that shows
	// no effect clears its members, one that moves is split until the
	// value responsible is compared alone. Off, every value is compared
	// alone, one after the other.
	Screen bool `json:"screen,omitempty"`
	// OneAtATime keeps a session with a budget from screening in groups
	// when the budget cannot reach every value one at a time (Plan).
	OneAtATime bool `json:"one_at_a_time,omitempty"`
	// GroupSize is the most values in one group (default
	// DefaultGroupSize); GroupRounds the most rounds of a group test
	// (default DefaultGroupRounds).
	GroupSize   int `json:"group_size,omitempty"`
	GroupRounds int `json:"group_rounds,omitempty"`
	// ClearGain is the effect a group must be shown smaller than, both
	// ways, to clear its members (default DefaultClearGain: "no effect
	// larger than 10% together"); ClearAlpha the chance that a group whose
	// members together move the result by more than ClearGain is cleared
	// (default 0.05, split over the group's looks).
	ClearGain  float64 `json:"clear_gain,omitempty"`
	ClearAlpha float64 `json:"clear_alpha,omitempty"`
	// Seed draws the order of the two runs of every round.
	Seed uint64 `json:"seed"`
	// Target is the caller's description of the target, workload and
	// objective; a resumed session must have the same.
	Target json.RawMessage `json:"target,omitempty"`

	// Dir, when set, holds the session's journal (Resume continues it).
	Dir    string `json:"-"`
	Resume bool   `json:"-"`
	// Progress, when set, is told of every decision; OnGroup of every
	// group test's.
	Progress func(Trial)     `json:"-"`
	OnGroup  func(GroupTest) `json:"-"`
}

// Defaults.
const (
	DefaultMaxRounds     = 500
	DefaultMaxCandidates = 25
	DefaultMinGain       = 0.03
	DefaultLastLookShare = 0.5
	// Group screening's defaults (screen.go): the most comparisons of
	// single values (the keep decisions' Bonferroni divisor), the size of
	// a group, the most rounds of a group test and the effect a cleared
	// group is shown to stay within.
	DefaultScreenComparisons = 10
	DefaultGroupSize         = 10
	DefaultGroupRounds       = 32
	DefaultClearGain         = 0.10
	minMinRounds             = 8
	// futilityLevel is the two-sided level of the interval the racing
	// rule drops a candidate by: when even its upper end lies below the
	// smallest detectable gain. Dropping claims nothing, so it spends no
	// error budget; a looser level only drops sooner.
	futilityLevel = 0.05
)

// Plan is what a session will do at most, decided before its first
// measurement: the design every keep decision is made at, the looks of a
// comparison, and the worst-case count of measurements.
type Plan struct {
	// Design is the session's budget over its comparisons and looks;
	// LookDesigns[k] the design a keep decision at look k is made at (its
	// Level is the look's share of the comparison's share of Alpha).
	Design      stats.Design   `json:"design"`
	LookDesigns []stats.Design `json:"look_designs"`
	Looks       []int          `json:"looks"`
	NoiseRounds int            `json:"noise_rounds"`
	// ConfirmRounds is the confirmation's rounds, at least (Options).
	ConfirmRounds int `json:"confirm_rounds"`
	// MaxConfirmRounds is the most it may take.
	MaxConfirmRounds int `json:"max_confirm_rounds"`
	Screening        int `json:"screening"` // screening comparisons (knob values)
	Comparisons      int `json:"comparisons"`
	// MaxMeasurements is the worst case: every comparison to its last
	// look, two measurements a round.
	MaxMeasurements int `json:"max_measurements"`
	// Confirm is the design of the confirmation.
	Confirm stats.Design `json:"confirm"`
	// Screen is group screening's plan (nil: one value at a time).
	Screen *ScreenPlan `json:"screen,omitempty"`
}

// withDefaults fills in the defaults.
func (o Options) withDefaults() Options {
	if o.Alpha <= 0 {
		o.Alpha = stats.DefaultAlpha
	}
	if o.ConfirmAlpha <= 0 {
		o.ConfirmAlpha = stats.DefaultAlpha
	}
	if o.MaxRounds <= 0 {
		o.MaxRounds = DefaultMaxRounds
		if o.MaxMeasurements > 0 {
			o.MaxRounds = min(o.MaxRounds, max(o.MaxMeasurements/8, minMinRounds))
		}
	}
	if o.MinGain <= 0 {
		o.MinGain = DefaultMinGain
	}
	if o.MaxCandidates <= 0 {
		o.MaxCandidates = DefaultMaxCandidates
		if o.Screen {
			o.MaxCandidates = DefaultScreenComparisons
		}
	}
	if o.Screen {
		if o.GroupSize <= 0 {
			o.GroupSize = DefaultGroupSize
		}
		if o.GroupRounds <= 0 {
			o.GroupRounds = DefaultGroupRounds
		}
		if o.ClearGain <= 0 {
			o.ClearGain = DefaultClearGain
		}
		if o.ClearAlpha <= 0 || o.ClearAlpha >= 1 {
			o.ClearAlpha = stats.DefaultAlpha
		}
	}
	if o.LastLookShare <= 0 || o.LastLookShare >= 1 {
		o.LastLookShare = DefaultLastLookShare
	}
	return o
}

// Plan decides the session's design from o: Alpha is split evenly
// (Bonferroni) over the comparisons the session may make (every screened
// value and two refinements per numeric knob, at most MaxCandidates:
// all known before the first measurement) and over each comparison's
// looks, so the chance of any false keep in the session is at most Alpha
// whatever the stopping rule, the order, and however the comparisons
// depend on each other (they share the incumbent's runs).
//
// Without Screen, a session with a budget screens in groups when
// comparing the values one at a time cannot reach them all even if each
// comparison decided at its first look (Estimate.ReachedBest); the
// returned plan says which (Plan.Screen). OneAtATime keeps it from that.
func (o Options) Plan() (Plan, error) {
	if o.Screen || o.OneAtATime || o.MaxMeasurements <= 0 || o.Resume {
		return o.plan()
	}
	p, err := o.plan()
	if err != nil {
		return p, err
	}
	if e := p.Estimate(o.MaxMeasurements); e.ReachedBest >= e.Values {
		return p, nil
	}
	o.Screen = true
	return o.plan()
}

func (o Options) plan() (_ Plan, err error) {
	o = o.withDefaults()
	if len(o.Candidates) == 0 {
		return Plan{}, errors.New("autotune: no candidates to try")
	}
	if o.P99Max < 0 || o.P99Max > 0 && o.LowerIsBetter {
		return Plan{}, fmt.Errorf("autotune: a p99 bound (%g) is for a throughput objective", o.P99Max)
	}
	if o.Alpha >= 1 || o.ConfirmAlpha >= 1 {
		return Plan{}, fmt.Errorf("autotune: alpha %g and confirmation alpha %g must be below 1", o.Alpha, o.ConfirmAlpha)
	}
	p := Plan{}
	for _, c := range o.Candidates {
		if len(c.Values) == 0 {
			return Plan{}, fmt.Errorf("autotune: candidate %s has no values", c.Knob)
		}
		p.Screening += len(c.Values)
		if c.Numeric {
			p.Comparisons += 2 // refinement: the midpoints on either side
		}
	}
	p.Comparisons = min(p.Comparisons+p.Screening, o.MaxCandidates)
	minRounds := max(o.MinRounds, minMinRounds)
	for range 4 { // the looks decide the level, the level the fewest rounds
		maxRounds := max(o.MaxRounds, minRounds)
		p.Looks = stats.LookSchedule(minRounds, maxRounds)
		p.Design = stats.Design{Alpha: o.Alpha, Comparisons: p.Comparisons, Looks: len(p.Looks), Paired: true}
		p.LookDesigns = lookDesigns(o.Alpha, p.Comparisons, len(p.Looks), o.LastLookShare)
		minRounds = max(minRounds, p.LookDesigns[0].RunsNeeded())
	}
	if need := p.LookDesigns[0].RunsNeeded(); p.Looks[0] < need {
		return Plan{}, fmt.Errorf("autotune: %d rounds per comparison can never keep anything at the session's level; raise the maximum to at least %d", o.MaxRounds, need)
	}
	p.Confirm = stats.Design{Alpha: o.ConfirmAlpha, Comparisons: 1, Looks: 1, Paired: true}
	p.NoiseRounds = o.NoiseRounds
	if p.NoiseRounds <= 0 {
		p.NoiseRounds = p.Looks[0]
	}
	p.ConfirmRounds, p.MaxConfirmRounds = o.ConfirmRounds, o.ConfirmRounds
	if p.ConfirmRounds <= 0 {
		p.ConfirmRounds = min(2*p.Looks[0], p.Looks[len(p.Looks)-1])
		p.MaxConfirmRounds = max(p.ConfirmRounds, p.Looks[len(p.Looks)-1])
	}
	if p.ConfirmRounds < p.Confirm.RunsNeeded() {
		return Plan{}, fmt.Errorf("autotune: %d confirmation rounds can never confirm; at least %d are needed", p.ConfirmRounds, p.Confirm.RunsNeeded())
	}
	if o.Screen {
		if p.Screen, err = o.screenPlan(); err != nil {
			return Plan{}, err
		}
		if o.NoiseRounds <= 0 { // the noise only sets the racing's goal: a group test's first look
			p.NoiseRounds = p.Screen.Looks[0]
		}
	}
	last := p.Looks[len(p.Looks)-1]
	p.MaxMeasurements = 2 * (p.NoiseRounds + p.Comparisons*last + p.MaxConfirmRounds)
	if p.Screen != nil {
		p.MaxMeasurements += 2 * p.Screen.GroupTests() * p.Screen.Looks[len(p.Screen.Looks)-1]
	}
	return p, nil
}

// lookDesigns splits a comparison's share of alpha over its looks: the
// last look takes lastShare, the earlier ones the rest evenly. Any split
// summing to the comparison's share keeps Bonferroni's bound; weighting
// the last look buys power where a noisy host needs it (a real effect
// near the detectable gain is proven, if at all, in the last rounds)
// for a little more evidence at the early looks, where a quiet host
// decides large effects anyway.
func lookDesigns(alpha float64, comparisons, looks int, lastShare float64) []stats.Design {
	out := make([]stats.Design, looks)
	for k := range out {
		w := (1 - lastShare) / float64(looks-1)
		switch {
		case looks == 1:
			w = 1
		case k == looks-1:
			w = lastShare
		}
		out[k] = stats.Design{Alpha: alpha * w, Comparisons: comparisons, Looks: 1, Paired: true}
	}
	return out
}

// Detectable is the smallest gain (0.05 for 5%) a comparison of n paired
// rounds at the two-sided level finds with the given power, on pairs
// whose log-ratios spread with standard deviation sigma: the normal
// approximation of the signed-rank test (its efficiency against the
// t-test is 3/pi on normal noise). The simulations measure the real
// figure per noise model (docs/autotune.md).
func Detectable(sigma float64, n int, level, power float64) float64 {
	if n <= 0 {
		return math.Inf(1)
	}
	z := normalQuantile(1-level/2) + normalQuantile(power)
	return math.Exp(z*sigma*math.Sqrt(math.Pi/3)/math.Sqrt(float64(n))) - 1
}

// normalQuantile is the standard normal quantile, by bisection on
// math.Erfc (exact to about 1e-12; called a few times a session).
func normalQuantile(p float64) float64 {
	lo, hi := -40.0, 40.0
	for range 200 {
		mid := (lo + hi) / 2
		if 0.5*math.Erfc(-mid/math.Sqrt2) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
