package rules

import (
	"strings"

	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "arm64-cow-bug-ignored", Section: "redis-startup", Severity: doctor.High,
		Title:  "The server was told to ignore the arm64 copy-on-write kernel bug",
		Why:    "on arm64 kernels with the MADV_FREE copy-on-write bug a forked child can see stale pages: corrupt RDB files and replicas; redis-server refuses to start there unless told to ignore it",
		Source: "RS syscheck.c checkLinuxMadvFreeForkBug; RS-conf ignore-warnings",
		Needs:  doctor.NeedRedis,
		Proves: []string{"CONFIG GET ignore-warnings"},
		Check:  checkARM64COW,
	})
}

func checkARM64COW(f *doctor.Facts) doctor.Result {
	v, ev, ok := f.Config("ignore-warnings")
	if !ok {
		return doctor.Skip("this server has no ignore-warnings setting (before 6.2.?)")
	}
	if !strings.Contains(strings.ToUpper(v), "ARM64-COW-BUG") {
		return doctor.Pass("ignore-warnings does not silence ARM64-COW-BUG").With(ev)
	}
	r := doctor.Fire("ignore-warnings contains ARM64-COW-BUG: the server's own kernel check is off").With(ev)
	if f.Host != nil {
		r = r.With(doctor.Ev("/proc/sys/kernel/osrelease", f.Host.Kernel.Release))
	}
	return r.WithFix(&doctor.Fix{NeedsReboot: true, NeedsRedisRestart: true, Advice: []string{
		"upgrade the kernel to a release with the arm64 MADV_FREE fix, reboot, then remove ignore-warnings ARM64-COW-BUG from redis.conf",
	}})
}
