package rules

import (
	"redline/internal/change"
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "slowlog-off", Section: "redis", Severity: doctor.Low,
		Title:  "The slow log is off",
		Why:    "without the slow log there is no record of which commands were slow; LATENCY DOCTOR asks for it",
		Source: "RS latency.c (command event advice); RS-conf slowlog-log-slower-than",
		Needs:  doctor.NeedRedis,
		Proves: []string{"CONFIG GET slowlog-log-slower-than", "CONFIG GET slowlog-max-len"},
		Check:  checkSlowlog,
	})
}

func checkSlowlog(f *doctor.Facts) doctor.Result {
	than, tev, ok1 := f.ConfigInt("slowlog-log-slower-than")
	maxLen, mev, ok2 := f.ConfigInt("slowlog-max-len")
	if !ok1 || !ok2 {
		return doctor.Unchecked("CONFIG GET slowlog-* failed")
	}
	fix := new(doctor.Fix)
	if than < 0 {
		fix.Set(change.KindRedisConfig, "slowlog-log-slower-than", "10000", tev.Value, "log commands slower than 10 ms (the default)")
	}
	if maxLen == 0 {
		fix.Set(change.KindRedisConfig, "slowlog-max-len", "128", mev.Value, "keep the last 128 slow commands (the default)")
	}
	if len(fix.Changes) == 0 {
		return doctor.Pass("slow log records commands slower than %d us, %d entries", than, maxLen).With(tev, mev)
	}
	return doctor.Fire("the slow log records nothing (slowlog-log-slower-than %d, slowlog-max-len %d)", than, maxLen).With(tev, mev).WithFix(fix)
}
