package profile

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"redline/internal/profiledata"
	"sort"
)

// Move is saved in lab results: profiledata.Move.
type Move = profiledata.Move

// Diff lists the functions whose self share moved most between base and
// p, largest absolute move first (ties: larger total move, then name);
// n > 0 keeps the first n. Shares, not sample counts, are compared, so
// profiles of different lengths or rates compare fairly.
func Diff(base, p *Profile, n int) []Move {
	moves := map[Frame]*Move{}
	get := func(f Function) *Move {
		k := Frame{Name: f.Name, Kernel: f.Kernel}
		if moves[k] == nil {
			moves[k] = &Move{Name: f.Name, Kernel: f.Kernel}
		}
		return moves[k]
	}
	for _, f := range functions(base) {
		m := get(f)
		m.BaseSelfPct, m.BaseTotalPct = f.SelfPct, f.TotalPct
	}
	for _, f := range functions(p) {
		m := get(f)
		m.SelfPct, m.TotalPct = f.SelfPct, f.TotalPct
	}
	out := make([]Move, 0, len(moves))
	for _, m := range moves {
		m.DeltaSelfPct, m.DeltaTotalPct = m.SelfPct-m.BaseSelfPct, m.TotalPct-m.BaseTotalPct
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if da, db := math.Abs(a.DeltaSelfPct), math.Abs(b.DeltaSelfPct); da != db {
			return da > db
		}
		if da, db := math.Abs(a.DeltaTotalPct), math.Abs(b.DeltaTotalPct); da != db {
			return da > db
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return !a.Kernel && b.Kernel
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}

// WriteDiff writes moves as a text table.
func WriteDiff(w io.Writer, moves []Move) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%-6s  %9s %9s %8s  %s\n", "side", "base self", "self", "moved", "function")
	for _, m := range moves {
		side := "user"
		if m.Kernel {
			side = "kernel"
		}
		fmt.Fprintf(bw, "%-6s  %8.2f%% %8.2f%% %+7.2f  %s\n", side, m.BaseSelfPct, m.SelfPct, m.DeltaSelfPct, m.Name)
	}
	return bw.Flush()
}
