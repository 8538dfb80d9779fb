package report

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/sys/unix"

	"redline/internal/labdata"
)

// The lab's CPU profiles (scenario profile: true): per workload and
// variant, the top functions of its profiled run, and for a variant the
// functions whose share moved most against the baseline's profiled run,
// with the flame graphs the lab wrote next to the results.

// profileTop is how many functions of each side a report lists.
const profileTop = 8

// profileView is one profiled run as the report shows it.
type profileView struct {
	Variant, Workload string
	Seq, Rep          int
	Error             string
	Samples           int64
	KernelPct         float64
	// UnknownPct and Caveats are the profile's own (profile.TopOf): what
	// limits its numbers, printed beside them.
	UnknownPct float64
	Caveats    []string
	Top, Moves [][]string
	BaseSeq    int
	// Flame and DiffFlame are paths relative to the results directory.
	Flame, DiffFlame string
	// Preempted says who took the main thread's CPU while it could run.
	Preempted string
}

func profileViews(res *labdata.Result) []profileView {
	var out []profileView
	for _, k := range groupOrder(res) {
		for _, r := range res.Runs {
			if r.Variant == k[0] && r.Workload == k[1] && r.Profile != nil {
				out = append(out, newProfileView(r))
			}
		}
	}
	return out
}

func newProfileView(r labdata.Run) profileView {
	p := r.Profile
	v := profileView{Variant: r.Variant, Workload: r.Workload, Seq: r.Seq, Rep: r.Rep, Error: p.Error,
		Samples: p.Samples, KernelPct: p.Top.KernelPct, UnknownPct: p.Top.UnknownPct, Caveats: p.Top.Caveats, BaseSeq: p.BaseSeq, Preempted: preemptedText(p)}
	v.Flame, v.DiffFlame = resultFile(p.Dir, p.Flame), resultFile(p.Dir, p.DiffFlame)
	for i := range max(min(profileTop, len(p.Top.User)), min(profileTop, len(p.Top.Kernel))) {
		row := []string{itoa(i + 1), "", "", "", ""}
		if i < len(p.Top.User) {
			row[1], row[2] = p.Top.User[i].Name, fmt.Sprintf("%.1f", p.Top.User[i].SelfPct)
		}
		if i < len(p.Top.Kernel) {
			row[3], row[4] = p.Top.Kernel[i].Name, fmt.Sprintf("%.1f", p.Top.Kernel[i].SelfPct)
		}
		v.Top = append(v.Top, row)
	}
	for _, m := range p.Moves[:min(profileTop, len(p.Moves))] {
		side := "user"
		if m.Kernel {
			side = "kernel"
		}
		v.Moves = append(v.Moves, []string{m.Name, side, fmt.Sprintf("%.1f", m.BaseSelfPct), fmt.Sprintf("%.1f", m.SelfPct),
			fmt.Sprintf("%+.1f", m.DeltaSelfPct)})
	}
	return v
}

var (
	profileTopHeader  = []string{"#", "user function", "self %", "kernel function", "self %"}
	profileMoveHeader = []string{"function", "side", "baseline self %", "self %", "change (points)"}
)

// headline is "run #5 (repetition 2): 3,024 samples, 62% of them in the
// kernel".
func (v profileView) headline() string {
	if v.Error != "" {
		return fmt.Sprintf("run #%d (repetition %d): %s", v.Seq, v.Rep, v.Error)
	}
	h := fmt.Sprintf("run #%d (repetition %d): %s samples, %.0f%% of them in the kernel", v.Seq, v.Rep, fmtRPS(float64(v.Samples)), v.KernelPct)
	if v.UnknownPct > 0 { // a result written before redline counted them has none
		h += fmt.Sprintf(", %.0f%% under frames perf could not name", v.UnknownPct)
	}
	for _, c := range v.Caveats {
		h += "; " + c
	}
	return h
}

// preemptedText is "The main thread left its CPU 332 times while it could
// still run (to redline 92%, cli.test 7%, ksoftirqd/0 0%) and 68 times to
// sleep."
func preemptedText(p *labdata.RunProfile) string {
	pr := p.Preempted
	switch {
	case pr == nil && p.SwitchError != "":
		return "No context-switch trace: " + p.SwitchError + "."
	case pr == nil:
		return ""
	}
	var by []string
	for _, b := range pr.By {
		share := fmt.Sprintf("%.0f%%", 100*float64(b.Count)/float64(max(pr.Count, 1)))
		if b.Count*100 < pr.Count {
			share = "<1%"
		}
		by = append(by, b.Comm+" "+share)
	}
	s := fmt.Sprintf("The main thread left its CPU %s times while it could still run", fmtRPS(float64(pr.Count)))
	if len(by) > 0 {
		s += " (to " + strings.Join(by, ", ") + ")"
	}
	return s + fmt.Sprintf(" and %s times to sleep.", fmtRPS(float64(pr.Asleep)))
}

// profileIntro says how to read the section.
const profileIntro = "perf record -F 999 -g on the server during one repetition of each variant (every thread, on-CPU only). " +
	"Self % is the share of samples whose leaf is the function. The differential flame graph draws the variant's stacks " +
	"coloured by how each one's share moved against the baseline's profile (red grew, blue shrank). " +
	"Who took the main thread's CPU while it could still run comes from its sched:sched_switch events traced during the same run. " +
	"The profiled runs stay in the statistics: perf costs every variant the same repetition."

// profileNote says which repetition was profiled, or why none was.
func profileNote(res *labdata.Result) string {
	if res.Sampling == nil || !res.Sampling.Profile {
		return ""
	}
	for _, r := range res.Runs {
		if r.Profile != nil {
			return ""
		}
	}
	return fmt.Sprintf("No CPU profile: the lab stopped before repetition %d, the one it profiles.", res.Sampling.ProfileRep)
}

// inlineSVG reads an SVG the lab wrote beside the results, for the HTML
// report to embed (it stays self-contained); "" when it is not there or
// is not a plain SVG.
func inlineSVG(dir, rel string) string {
	if dir == "" || rel == "" || resultFile("", rel) == "" {
		return ""
	}
	b, err := readBeneath(dir, filepath.FromSlash(rel))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.Index(s, "<svg")
	if i < 0 || activeSVG.MatchString(s) {
		return ""
	}
	return s[i:]
}

// activeSVG finds what would make an embedded SVG run or load anything.
var activeSVG = regexp.MustCompile(`(?i)<script|<foreignobject|javascript:|\son[a-z]+\s*=|href\s*=`)

// resultFile is the path of a file a result names (a profile's flame
// graph), relative to the results directory, or "" when the names would
// lead out of it or to something not an SVG: result.json may be someone
// else's, and a report must not embed or link a local file it names.
func resultFile(dir, name string) string {
	if name == "" {
		return ""
	}
	p := path.Join(filepath.ToSlash(dir), name)
	if !filepath.IsLocal(filepath.FromSlash(p)) || !strings.HasSuffix(p, ".svg") {
		return ""
	}
	return p
}

// maxSVG bounds the flame graph a report embeds.
const maxSVG = 32 << 20

// readBeneath reads the regular file rel below dir, never through a link
// out of it (openat2 RESOLVE_BENEATH) and never blocking (a FIFO).
func readBeneath(dir, rel string) ([]byte, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	fd, err := unix.Openat2(int(d.Fd()), rel, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", rel)
	}
	return io.ReadAll(io.LimitReader(f, maxSVG))
}
