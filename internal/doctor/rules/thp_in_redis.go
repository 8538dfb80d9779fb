package rules

import (
	"fmt"

	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "thp-in-redis", Section: "memory", Severity: doctor.High,
		Title:  "The server's memory is backed by transparent huge pages",
		Why:    "LATENCY DOCTOR's own condition: AnonHugePages in the server's smaps means copy-on-write copies 2 MB at a time after a fork",
		Source: "RS latency.c (THPGetAnonHugePagesSize); K-thp",
		Reads:  []string{"proc/PID/smaps_rollup"},
		Needs:  doctor.NeedRedisProcess,
		Proves: []string{"/proc/*/smaps_rollup AnonHugePages"},
		Check:  checkTHPInRedis,
	})
}

func checkTHPInRedis(f *doctor.Facts) doctor.Result {
	p := f.RedisProcess()
	if p.AnonHugePages == nil {
		return doctor.Unchecked("/proc/%d/smaps_rollup is not readable (run as root or as the server's user)", p.PID)
	}
	ev := doctor.Ev(fmt.Sprintf("/proc/%d/smaps_rollup AnonHugePages", p.PID), doctor.Bytes(*p.AnonHugePages))
	if *p.AnonHugePages == 0 {
		return doctor.Pass("no huge pages in the server's memory").With(ev)
	}
	return doctor.Fire("%s of the server's memory is in transparent huge pages", doctor.Bytes(*p.AnonHugePages)).With(ev).
		WithFix(&doctor.Fix{NeedsRoot: true, NeedsRedisRestart: true, Advice: []string{
			"apply thp-enabled's fix (echo madvise > /sys/kernel/mm/transparent_hugepage/enabled) and set disable-thp yes, then restart the server: pages already collapsed stay huge",
		}})
}
