package rules

import (
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "disable-thp-off", Section: "memory", Severity: doctor.High,
		Title:  "The server does not opt out of THP while THP is always",
		Why:    "since 6.2 the server disables THP for itself (prctl) unless disable-thp is no; with THP always and disable-thp no it gets huge pages and fork latency",
		Source: "RS-conf disable-thp; redis/redis PR #7381",
		Needs:  doctor.NeedRedis | doctor.NeedHost,
		Proves: []string{"CONFIG GET disable-thp", "/sys/kernel/mm/transparent_hugepage/enabled"},
		Check:  checkDisableTHP,
	})
}

func checkDisableTHP(f *doctor.Facts) doctor.Result {
	v, ev, ok := f.Config("disable-thp")
	if !ok {
		return doctor.Skip("this server has no disable-thp setting (before 6.2)")
	}
	if f.Host.THP == nil || f.Host.THP.Enabled == "" {
		return doctor.Skip("this kernel has no transparent huge pages")
	}
	tev := doctor.Ev(thpEnabledPath, f.Host.THP.EnabledRaw)
	if v != "no" || f.Host.THP.Enabled != "always" {
		return doctor.Pass("disable-thp %s, THP %s", v, f.Host.THP.Enabled).With(ev, tev)
	}
	return doctor.Fire("disable-thp no while THP is [always]").With(ev, tev).
		WithFix(&doctor.Fix{NeedsRedisRestart: true, Advice: []string{"set disable-thp yes in redis.conf and restart the server (it is applied at start-up)"}})
}
