package rules

import (
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "persistence-failing", Section: "redis", Severity: doctor.High,
		Title:  "The last background save or AOF write failed",
		Why:    "a failed BGSAVE makes the server refuse writes (stop-writes-on-bgsave-error); a failed fork is often overcommit or memory limits",
		Source: "RS-conf stop-writes-on-bgsave-error; RD-adm",
		Needs:  doctor.NeedRedis,
		Proves: []string{"INFO rdb_last_bgsave_status|INFO aof_last_bgrewrite_status|INFO aof_last_write_status"},
		Check:  checkPersistenceFailing,
	})
}

var persistenceStatus = []string{"rdb_last_bgsave_status", "aof_last_bgrewrite_status", "aof_last_write_status"}

func checkPersistenceFailing(f *doctor.Facts) doctor.Result {
	var evs, bad []doctor.Evidence
	for _, k := range persistenceStatus {
		v, ok := f.Info().Get(k)
		if !ok {
			continue
		}
		e := doctor.Ev("INFO "+k, v)
		evs = append(evs, e)
		if v != "ok" {
			bad = append(bad, e)
		}
	}
	if len(evs) == 0 {
		return doctor.Skip("INFO has no persistence status fields")
	}
	if len(bad) == 0 {
		return doctor.Pass("last save and AOF writes ok").With(evs...)
	}
	return doctor.Fire("%s is %s", bad[0].Source[5:], bad[0].Value).With(evs...).
		WithFix(&doctor.Fix{Advice: []string{
			"read the server's log for the reason (\"Can't save in background: fork: Cannot allocate memory\" means vm.overcommit_memory or a memory limit; see overcommit-memory and fork-headroom)",
			"check free disk space and permissions of the server's dir (CONFIG GET dir)",
		}})
}
