package rules

import (
	"redline/internal/change"
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "latency-monitor-off", Section: "redis", Severity: doctor.Info,
		Title:  "The latency monitor is off",
		Why:    "with latency-monitor-threshold 0 (the default) LATENCY LATEST and LATENCY DOCTOR have nothing to say about forks, slow commands or fsync",
		Source: "RS latency.c; RD-lat",
		Needs:  doctor.NeedRedis,
		Proves: []string{"CONFIG GET latency-monitor-threshold"},
		Check:  checkLatencyMonitor,
	})
}

func checkLatencyMonitor(f *doctor.Facts) doctor.Result {
	v, ev, ok := f.ConfigInt("latency-monitor-threshold")
	if !ok {
		return doctor.Unchecked("CONFIG GET latency-monitor-threshold failed")
	}
	if v > 0 {
		return doctor.Pass("latency monitor records events of %d ms and more", v).With(ev)
	}
	return doctor.Fire("latency-monitor-threshold is 0: latency events are not recorded").With(ev).
		WithFix(new(doctor.Fix).Set(change.KindRedisConfig, "latency-monitor-threshold", "10", ev.Value, "record events of 10 ms and more"))
}
