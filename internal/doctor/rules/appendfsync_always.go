package rules

import (
	"redline/internal/change"
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "appendfsync-always", Section: "redis", Severity: doctor.Medium,
		Title:  "appendfsync always waits for the disk on every write",
		Why:    "every write command waits for an fsync: latency is the disk's; LATENCY DOCTOR calls good performance with it \"very hard\"",
		Source: "RD-lat (durability table); RS latency.c (aof-fsync-always)",
		Needs:  doctor.NeedRedis,
		Proves: []string{"CONFIG GET appendonly|CONFIG GET appendfsync"},
		Check:  checkFsyncAlways,
	})
}

func checkFsyncAlways(f *doctor.Facts) doctor.Result {
	aof, aev, ok := f.Config("appendonly")
	if !ok {
		return doctor.Unchecked("CONFIG GET appendonly failed")
	}
	pol, pev, _ := f.Config("appendfsync")
	if aof != "yes" || pol != "always" {
		return doctor.Pass("appendonly %s, appendfsync %s", aof, pol).With(aev, pev)
	}
	fix := new(doctor.Fix).Set(change.KindRedisConfig, "appendfsync", "everysec", "always", "fsync once a second instead of on every write")
	fix.Caution = "everysec can lose up to one second of writes on a crash: change it only with the data owner's sign-off"
	return doctor.Fire("appendonly yes with appendfsync always").With(aev, pev).WithFix(fix)
}
