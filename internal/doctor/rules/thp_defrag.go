package rules

import (
	"redline/internal/change"
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "thp-defrag", Section: "memory", Severity: doctor.Medium,
		Title:  "THP defrag stalls allocations",
		Why:    "defrag always makes an allocation that finds no huge page \"stall ... and directly reclaim pages and compact memory\"; redis-server does not check this",
		Source: "K-thp (defrag); the default is madvise",
		Reads:  []string{"thp"},
		Needs:  doctor.NeedHost,
		Proves: []string{"/sys/kernel/mm/transparent_hugepage/defrag"},
		Check:  checkTHPDefrag,
	})
}

const thpDefragPath = "/sys/kernel/mm/transparent_hugepage/defrag"

func checkTHPDefrag(f *doctor.Facts) doctor.Result {
	thp := f.Host.THP
	if thp == nil || thp.Defrag == "" {
		return doctor.Skip("this kernel has no THP defrag setting")
	}
	ev := doctor.Ev(thpDefragPath, thp.DefragRaw)
	if thp.Defrag != "always" {
		return doctor.Pass("THP defrag %s", thp.Defrag).With(ev)
	}
	return doctor.Fire("THP defrag is [always]: allocations stall for compaction").With(ev).
		WithFix(new(doctor.Fix).Set(change.KindFile, thpDefragPath, "madvise", "always", "no direct compaction for ordinary allocations"))
}
