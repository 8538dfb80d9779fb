package rules

import (
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "startup-warnings", Section: "redis-startup", Severity: doctor.Medium,
		Title:  "redis-server logged warnings at start-up",
		Why:    "the server checks overcommit, THP, the TCP backlog and the open-files limit when it starts and logs what it finds; those warnings are usually never read",
		Source: "RS server.c (checkTcpBacklogSettings, adjustOpenFilesLimit, linuxMemoryWarnings), RS syscheck.c",
		Needs:  doctor.NeedRedis,
		Proves: []string{"CONFIG GET logfile"},
		Check:  checkStartupWarnings,
	})
}

func checkStartupWarnings(f *doctor.Facts) doctor.Result {
	if !f.Redis.Process.Local {
		return doctor.Unchecked("the server's log is on another host")
	}
	if e := f.Redis.Errors["log"]; e != "" {
		return doctor.Unchecked("cannot read the server's log: %s", e)
	}
	logfile, lev, _ := f.Config("logfile")
	if logfile == "" && len(f.Redis.LogWarnings) == 0 {
		// redisadmin reads the standard output only when it is a file.
		return doctor.Unchecked("the server logs to stdout (logfile \"\"); check its supervisor's journal")
	}
	if logfile == "" {
		logfile = "the server's standard output"
	}
	if len(f.Redis.LogWarnings) == 0 {
		return doctor.Pass("no warnings since the last start in %s", logfile).With(lev)
	}
	r := doctor.Fire("the server logged %d warning(s) when it last started", len(f.Redis.LogWarnings)).With(lev)
	for _, w := range f.Redis.LogWarnings {
		r = r.With(doctor.Evidence{Source: logfile, Value: w})
	}
	return r.Note("each warning has its own rule in this report, with the fix")
}
