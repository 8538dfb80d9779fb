package rules

import (
	"fmt"

	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "io-threads-unset", Section: "redis", Severity: doctor.Low,
		Title:  "A busy server on a large machine uses no I/O threads",
		Why:    "socket reads and writes run on the main thread; with 4+ spare cores I/O threads take that work (4 cores: 2-3 threads, 8 cores: 6; more than 8 rarely helps; not with TLS before 8.0)",
		Source: "RS-conf io-threads (6.x-7.x); redis/redis PR #13695 (8.0); W (io-threads 8)",
		Needs:  doctor.NeedRedis | doctor.NeedRedisProcess,
		Proves: []string{"CONFIG GET io-threads"},
		Check:  checkIOThreadsUnset,
	})
}

// mainThreadBusy is the share of one core above which the main thread is
// the bottleneck.
const mainThreadBusy = 0.7

func checkIOThreadsUnset(f *doctor.Facts) doctor.Result {
	n, ev, ok := f.ConfigInt("io-threads")
	if !ok {
		return doctor.Skip("this server has no io-threads (before 6.0)")
	}
	cpus, cev := f.AllowedCPUs()
	allowed := cpus.Len()
	evs := append([]doctor.Evidence{ev}, cev...)
	if n > 1 || allowed < 4 {
		return doctor.Pass("io-threads %d with %d allowed CPUs", n, allowed).With(evs...)
	}
	busy, bev, known := mainThreadLoad(f)
	if known {
		evs = append(evs, bev)
	}
	want := min(8, allowed*3/4, allowed-1)
	fix := &doctor.Fix{NeedsRedisRestart: true, Advice: []string{
		fmt.Sprintf("set io-threads %d in redis.conf and restart the server (io-threads cannot be changed with CONFIG SET); on 6.x/7.x also consider io-threads-do-reads yes", want),
		"measure before and after (redline lab): threads help only when the main thread is the bottleneck",
	}}
	switch {
	case known && busy >= mainThreadBusy:
		return doctor.Fire("the main thread uses %.0f%% of a core, io-threads is 1 and %d CPUs are allowed", busy*100, allowed).With(evs...).WithFix(fix).WithSeverity(doctor.Medium)
	case allowed >= 8:
		return doctor.Fire("io-threads is 1 on a machine with %d allowed CPUs", allowed).With(evs...).WithFix(fix)
	}
	return doctor.Pass("io-threads 1; the main thread is not busy (%.0f%% of a core)", busy*100).With(evs...)
}

// mainThreadLoad returns the main thread's CPU use as a share of one core:
// over the sample window, or averaged over the server's uptime.
func mainThreadLoad(f *doctor.Facts) (float64, doctor.Evidence, bool) {
	sys, ok1 := f.Info().Float("used_cpu_sys_main_thread")
	usr, ok2 := f.Info().Float("used_cpu_user_main_thread")
	up, ok3 := f.Info().Int("uptime_in_seconds")
	if !ok1 || !ok2 || !ok3 || up <= 0 {
		return 0, doctor.Evidence{}, false
	}
	used, secs, note := sys+usr, float64(up), "averaged over the server's uptime"
	if f.PrevRedis != nil && f.Interval > 0 {
		ps, _ := f.PrevRedis.Info.Float("used_cpu_sys_main_thread")
		pu, _ := f.PrevRedis.Info.Float("used_cpu_user_main_thread")
		used, secs, note = used-ps-pu, f.Interval.Seconds(), "over the sample window"
	}
	share := used / secs
	return share, doctor.Evidence{Source: "INFO used_cpu_{sys,user}_main_thread", Value: fmt.Sprintf("%.0f%% of a core", share*100), Note: note}, true
}
