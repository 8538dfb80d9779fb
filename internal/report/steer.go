package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"redline/internal/labdata"
)

// maxSteerMoves bounds the moves a report lists per variant (result.json
// has them all).
const maxSteerMoves = 8

// steerLines say what redline steer did during a steer variant's runs:
// its sessions, the moves, the last map, the sampler's cost, drift, and
// whether every IRQ was restored.
func steerLines(v labdata.VariantInfo) []string {
	if len(v.Steer) == 0 {
		return nil
	}
	var lines []string
	periods, moves, drifts := 0, 0, 0
	var cpu float64
	var events, lost uint64
	var restoreErrs []string
	for _, s := range v.Steer {
		periods += s.Periods
		moves += len(s.Moves)
		drifts += len(s.Drifts)
		cpu += s.SamplerCPU
		events, lost = events+s.Events, lost+s.Lost
		if s.RestoreError != "" {
			restoreErrs = append(restoreErrs, fmt.Sprintf("round %d: %s", s.Rep, s.RestoreError))
		}
	}
	mode := "steer"
	if v.Steer[0].DryRun {
		mode = "steer (dry run: moves proposed, none made)"
	}
	lines = append(lines, fmt.Sprintf("%s ran in %d round(s), %d period(s) in all: %d IRQ move(s), %d drift(s); sampler %.2f%% of a CPU on average, %d records read, %d lost.",
		mode, len(v.Steer), periods, moves, drifts, 100*cpu/float64(len(v.Steer)), events, lost))
	if ml := steerMoveList(v.Steer); ml != "" {
		lines = append(lines, "Steer moves: "+ml+".")
	}
	last := v.Steer[len(v.Steer)-1]
	if m := steerMap(last.Final); m != "" {
		lines = append(lines, fmt.Sprintf("Steer's map at the end of round %d: %s.", last.Rep, m))
	}
	for _, s := range v.Steer {
		for _, d := range s.Drifts {
			lines = append(lines, fmt.Sprintf("Steer drift in round %d: %s; left alone.", s.Rep, d))
		}
		for _, n := range s.Notes {
			lines = append(lines, fmt.Sprintf("Steer in round %d: %s.", s.Rep, strings.TrimSuffix(n, ".")))
		}
		if s.Irqbalance != "" {
			lines = append(lines, fmt.Sprintf("Steer and irqbalance in round %d: %s.", s.Rep, strings.TrimSuffix(s.Irqbalance, ".")))
		}
	}
	if len(restoreErrs) > 0 {
		lines = append(lines, "Steer did NOT restore every IRQ ("+strings.Join(restoreErrs, "; ")+"): check with `redline tune status` and restore with `redline tune rollback`.")
	} else if last.Restored != "" {
		lines = append(lines, "After each round steer restored what it moved (last round: "+last.Restored+").")
	}
	return lines
}

func steerMoveList(ss []labdata.SteerSession) string {
	var parts []string
	n := 0
	for _, s := range ss {
		for _, m := range s.Moves {
			n++
			if len(parts) < maxSteerMoves {
				parts = append(parts, fmt.Sprintf("round %d irq %d (%s) %s -> %d", s.Rep, m.IRQ, m.Queue, m.From, m.To))
			}
		}
	}
	if n > len(parts) {
		parts = append(parts, fmt.Sprintf("and %d more (result.json has them all)", n-len(parts)))
	}
	return strings.Join(parts, ", ")
}

// steerMap is each queue: its IRQ and where it is delivered, where its
// packets were consumed.
func steerMap(qs []labdata.SteerQueue) string {
	var parts []string
	for _, q := range qs {
		p := q.Queue
		if q.IRQ > 0 {
			p += fmt.Sprintf(" irq %d on CPU %s", q.IRQ, q.On)
		} else {
			p += " (no IRQ)"
		}
		if c := consumerCPUs(q.Consumers); c != "" {
			p += fmt.Sprintf(", %d packets consumed on CPU %s", q.Matched, c)
		}
		if q.Drifted {
			p += ", drifted"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// consumerCPUs lists the consuming CPUs, busiest first, with their share
// when there are several.
func consumerCPUs(m map[int]uint64) string {
	cpus := make([]int, 0, len(m))
	var total uint64
	for c, n := range m {
		cpus, total = append(cpus, c), total+n
	}
	slices.SortFunc(cpus, func(a, b int) int {
		if m[a] != m[b] {
			return int(m[b]) - int(m[a])
		}
		return a - b
	})
	if len(cpus) == 1 {
		return strconv.Itoa(cpus[0])
	}
	var parts []string
	for _, c := range cpus {
		parts = append(parts, fmt.Sprintf("%d (%.0f%%)", c, 100*float64(m[c])/float64(total)))
	}
	return strings.Join(parts, ", ")
}
