package profile

import (
	"bufio"
	"fmt"
	"io"
	"redline/internal/profiledata"
	"sort"
)

// Function is saved in lab results: profiledata.Function.
type Function = profiledata.Function

// TopTable is saved in lab results: profiledata.TopTable.
type TopTable = profiledata.TopTable

// Top summarises p; n > 0 keeps only the first n functions of each side.
// Thread-name roots are not functions and are left out.
func Top(p *Profile, n int) TopTable {
	fns := functions(p)
	t := TopTable{Samples: p.Samples()}
	for _, f := range fns {
		if f.Kernel {
			t.KernelSamples += f.Self
			t.Kernel = append(t.Kernel, f)
		} else {
			t.User = append(t.User, f)
		}
	}
	t.KernelPct = pct(t.KernelSamples, t.Samples)
	t.UnknownSamples = unknownSamples(p)
	t.UnknownPct = pct(t.UnknownSamples, t.Samples)
	if n > 0 {
		t.User, t.Kernel = t.User[:min(n, len(t.User))], t.Kernel[:min(n, len(t.Kernel))]
	}
	return t
}

// functions counts every function of p, sorted by self, total, name.
func functions(p *Profile) []Function {
	byFrame := map[Frame]*Function{}
	total := p.Samples()
	for _, s := range p.Stacks {
		seen := map[Frame]bool{}
		for i, fr := range s.Frames[1:] { // [0] is the thread
			f := byFrame[fr]
			if f == nil {
				f = &Function{Name: fr.Name, Kernel: fr.Kernel}
				byFrame[fr] = f
			}
			if !seen[fr] {
				seen[fr] = true
				f.Total += s.Count
			}
			if i == len(s.Frames)-2 {
				f.Self += s.Count
			}
		}
	}
	out := make([]Function, 0, len(byFrame))
	for _, f := range byFrame {
		f.SelfPct, f.TotalPct = pct(f.Self, total), pct(f.Total, total)
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Self != b.Self {
			return a.Self > b.Self
		}
		if a.Total != b.Total {
			return a.Total > b.Total
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return !a.Kernel && b.Kernel
	})
	return out
}

func pct(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// WriteTop writes t as two text tables, user then kernel.
func WriteTop(w io.Writer, t TopTable) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%d samples, %.1f%% in the kernel, %.1f%% under frames perf could not name\n", t.Samples, t.KernelPct, t.UnknownPct)
	for _, c := range t.Caveats {
		fmt.Fprintf(bw, "note: %s\n", c)
	}
	for _, side := range []struct {
		title string
		fns   []Function
	}{{"user", t.User}, {"kernel", t.Kernel}} {
		fmt.Fprintf(bw, "\n%-6s  %7s %7s  %s\n", side.title, "self%", "total%", "function")
		if len(side.fns) == 0 {
			fmt.Fprintln(bw, "        (none)")
		}
		for _, f := range side.fns {
			fmt.Fprintf(bw, "        %6.2f%% %6.2f%%  %s\n", f.SelfPct, f.TotalPct, f.Name)
		}
	}
	return bw.Flush()
}
