package report

import (
	"fmt"
	"slices"
	"strings"

	"redline/internal/labdata"
	"redline/internal/stats"
)

// noiseNotes state, per variant, what else the host did during its runs
// (outside load, steal, flagged runs) and, per variant and workload, the
// likely cause when the runs fall into two groups: the server and the load
// sharing a CPU in some runs and not in others.
func noiseNotes(res *labdata.Result) []string {
	var notes []string
	for _, v := range variantOrder(res) {
		if n := variantNoise(res, v); n != "" {
			notes = append(notes, n)
		}
	}
	for _, k := range groupOrder(res) {
		if n := sharedCPUNote(res, k[0], k[1]); n != "" {
			notes = append(notes, n)
		}
	}
	return notes
}

func variantOrder(res *labdata.Result) []string {
	var out []string
	for _, r := range res.Runs {
		if !slices.Contains(out, r.Variant) {
			out = append(out, r.Variant)
		}
	}
	return out
}

func groupOrder(res *labdata.Result) [][2]string {
	var out [][2]string
	for _, r := range res.Runs {
		k := [2]string{r.Variant, r.Workload}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// variantNoise is "Noise under baseline: ..." or "" when no run recorded
// its noise.
func variantNoise(res *labdata.Result, variant string) string {
	var outside, steal, mhz []float64
	flagged, runs := 0, 0
	var why []string
	for _, r := range res.Runs {
		if r.Variant != variant || r.Noise == nil {
			continue
		}
		runs++
		outside, steal = append(outside, r.Noise.OutsideCPU), append(steal, r.Noise.Steal)
		if r.Noise.MHz > 0 {
			mhz = append(mhz, r.Noise.MHz)
		}
		if r.Noise.Noisy != "" {
			flagged++
			why = append(why, fmt.Sprintf("#%d %s", r.Seq, r.Noise.Noisy))
		}
	}
	if runs == 0 {
		return ""
	}
	s := fmt.Sprintf("Noise under %s: other work took %.0f%% of the CPU in the median run (at most %.0f%%), the hypervisor stole %.1f%% (at most %.1f%%)",
		variant, 100*stats.Median(outside), 100*slices.Max(outside), 100*stats.Median(steal), 100*slices.Max(steal))
	if len(mhz) > 0 {
		s += fmt.Sprintf(", CPUs at %.0f..%.0f MHz", slices.Min(mhz), slices.Max(mhz))
	}
	s += fmt.Sprintf("; %d of %d runs flagged as noisy", flagged, runs)
	if flagged > 0 {
		s += " (" + strings.Join(firstN(why, 3), "; ") + ")"
	}
	return s + "."
}

func firstN(ss []string, n int) []string {
	if len(ss) <= n {
		return ss
	}
	return append(slices.Clone(ss[:n]), fmt.Sprintf("%d more", len(ss)-n))
}

// pinned reports whether the scenario pins both the server and the load
// for variant.
func pinned(res *labdata.Result, variant string) bool {
	srv, cli := res.Scenario.Server.CPUs, res.Scenario.Client.CPUs
	for _, v := range res.Scenario.Variants {
		if v.Name != variant {
			continue
		}
		if v.Server != nil && v.Server.CPUs != "" {
			srv = v.Server.CPUs
		}
		if v.Client != nil && v.Client.CPUs != "" {
			cli = v.Client.CPUs
		}
	}
	return srv != "" && cli != ""
}

// twoGroupsApart is how far apart (relative to the lower median) the two
// groups' medians must be for sharedCPUNote to call them two groups.
const twoGroupsApart = 0.05

// twoGroups reports whether the runs do fall into two groups by a and b: a
// hint, not a claim (no error rate is stated for it), so it asks for what
// a reader would see as two groups: at least two runs on each side, every
// run of one side beyond every run of the other, and the medians at least
// twoGroupsApart apart. One run against fourteen, 1.7% apart, is none
// (issue 41).
func twoGroups(a, b []float64) bool {
	if len(a) < 2 || len(b) < 2 {
		return false
	}
	if slices.Max(a) < slices.Min(b) || slices.Max(b) < slices.Min(a) {
		ma, mb := stats.Median(a), stats.Median(b)
		return max(ma, mb) >= (1+twoGroupsApart)*min(ma, mb)
	}
	return false
}

// sharedCPUNote names a likely cause of two-humped runs: the server and
// the load shared a CPU in some of a group's runs and not in the others.
func sharedCPUNote(res *labdata.Result, variant, workload string) string {
	var shared, apart []float64
	for _, r := range res.Runs {
		if r.Variant != variant || r.Workload != workload || r.Noise == nil || r.Summary == nil || r.Retried {
			continue
		}
		if r.Noise.SharedCPU > 0.5 {
			shared = append(shared, r.Summary.RPS)
		} else {
			apart = append(apart, r.Summary.RPS)
		}
	}
	if !twoGroups(shared, apart) {
		return ""
	}
	advice := "; pin them apart (server.cpus, client.cpus) to remove it"
	if pinned(res, variant) {
		advice = " (they were pinned: other threads of the two processes shared it)"
	}
	return fmt.Sprintf("%s on %s: client and server shared a CPU in %d of %d runs (median %s requests/s in those, %s in the others): a likely cause of runs that fall into two groups%s.",
		variant, workload, len(shared), len(shared)+len(apart), fmtRPS(stats.Median(shared)), fmtRPS(stats.Median(apart)), advice)
}
