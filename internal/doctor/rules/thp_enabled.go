package rules

import (
	"fmt"

	"redline/internal/change"
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "thp-enabled", Section: "memory", Severity: doctor.High,
		Title:  "Transparent huge pages are set to always",
		Why:    "with THP always, copy-on-write after fork copies 2 MB pages: latency spikes and memory growth during BGSAVE",
		Source: "RS server.c linuxMemoryWarnings (THP [always]); RD-lat; K-thp",
		Reads:  []string{"thp"},
		Needs:  doctor.NeedHost | doctor.ReadsRedis,
		Proves: []string{"/sys/kernel/mm/transparent_hugepage/enabled"},
		Check:  checkTHPEnabled,
	})
}

const thpEnabledPath = "/sys/kernel/mm/transparent_hugepage/enabled"

func checkTHPEnabled(f *doctor.Facts) doctor.Result {
	thp := f.Host.THP
	if thp == nil || thp.Enabled == "" {
		return doctor.Skip("this kernel has no transparent huge pages")
	}
	ev := doctor.Ev(thpEnabledPath, thp.EnabledRaw)
	if thp.Enabled != "always" {
		return doctor.Pass("THP is %s", thp.Enabled).With(ev)
	}
	fix := new(doctor.Fix).Set(change.KindFile, thpEnabledPath, "madvise", "always", "stop khugepaged from backing Redis with huge pages")
	fix.NeedsRedisRestart = true
	fix.Advice = []string{"restart redis-server afterwards: pages already collapsed stay huge (K-thp)",
		"to keep it across reboots add transparent_hugepage=madvise to the kernel command line (needs a reboot)"}
	r := doctor.Fire("THP is [always]").With(ev).WithFix(fix)
	if v, cev, ok := f.Config("disable-thp"); ok {
		r = r.With(cev)
		if v == "yes" {
			r = r.WithSeverity(doctor.Medium)
			r.Message = "THP is [always]; the server opts out with disable-thp yes, but its forks' parents elsewhere on the host and any server started with disable-thp no do not"
		}
	}
	for _, p := range f.RedisProcesses() {
		if p.AnonHugePages != nil {
			r = r.With(doctor.Ev(fmt.Sprintf("/proc/%d/smaps_rollup AnonHugePages", p.PID), doctor.Bytes(*p.AnonHugePages)))
		}
	}
	return r
}
