package rules

import (
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "fork-headroom", Section: "memory", Severity: doctor.Medium,
		Title:  "No memory headroom for a persistence fork",
		Why:    "an RDB save or AOF rewrite \"can use up to 2 times the memory\" while pages are copied on write; inside a memory limit the server is OOM-killed",
		Source: "RD-adm; RS INFO rdb_last_cow_size",
		Needs:  doctor.NeedRedis | doctor.NeedHost,
		Proves: []string{"CONFIG GET save|CONFIG GET appendonly|INFO used_memory_rss"},
		Check:  checkForkHeadroom,
	})
}

func checkForkHeadroom(f *doctor.Facts) doctor.Result {
	if f.Redis.Config == nil {
		return doctor.Unchecked("CONFIG GET failed: persistence settings unknown")
	}
	if !f.Redis.Config.Persistent() {
		_, sev, _ := f.Config("save")
		_, aev, _ := f.Config("appendonly")
		return doctor.Pass("persistence is off: the server does not fork for saves").With(sev, aev)
	}
	rss, rev, ok := f.InfoInt("used_memory_rss")
	if !ok {
		return doctor.Unchecked("INFO has no used_memory_rss")
	}
	limit, lev, ok := memoryLimit(f)
	if !ok {
		return doctor.Unchecked("the memory limit is unknown")
	}
	evs := []doctor.Evidence{rev, lev}
	if cow, cev, ok := f.InfoInt("rdb_last_cow_size"); ok && cow > 0 {
		evs = append(evs, cev)
	}
	if limit >= 2*uint64(rss) {
		return doctor.Pass("limit %s >= 2 x RSS %s", doctor.Bytes(limit), doctor.Bytes(uint64(rss))).With(evs...)
	}
	return doctor.Fire("RSS %s with persistence on, but only %s may be used: a fork that copies much of it runs out", doctor.Bytes(uint64(rss)), doctor.Bytes(limit)).With(evs...).
		WithFix(&doctor.Fix{Advice: []string{
			"raise the memory limit (container or host) to at least twice the RSS, or lower maxmemory",
			"disable THP (thp-enabled) so copy-on-write copies 4 KB pages, not 2 MB ones",
		}})
}
