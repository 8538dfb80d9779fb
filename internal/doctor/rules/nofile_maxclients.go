package rules

import (
	"fmt"
	"strconv"
	"strings"

	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "nofile-maxclients", Section: "redis", Severity: doctor.High,
		Title:  "The open-files limit is too low for maxclients",
		Why:    "the server needs maxclients+32 file descriptors; when the limit is lower it silently lowers maxclients at start-up and refuses clients beyond it",
		Source: "RS server.c adjustOpenFilesLimit; RD-cli",
		Reads:  []string{"proc/PID/limits"},
		Needs:  doctor.NeedRedis,
		Proves: []string{"/proc/*/limits Max open files", "CONFIG GET maxclients"},
		Check:  checkNofile,
	})
}

// reservedFDs is CONFIG_MIN_RESERVED_FDS: descriptors the server keeps
// for itself (logs, persistence, listening sockets).
const reservedFDs = 32

func checkNofile(f *doctor.Facts) doctor.Result {
	running, mev, ok := f.ConfigInt("maxclients")
	if !ok {
		return doctor.Unchecked("CONFIG GET maxclients failed: %s", f.Redis.Errors["config"])
	}
	evs := []doctor.Evidence{mev}
	want := running
	if cf := f.Redis.ConfFile; cf != nil {
		if v, err := strconv.ParseInt(cf.Directives["maxclients"], 10, 64); err == nil {
			evs = append(evs, doctor.Ev(cf.Path+" maxclients", v))
			want = max(want, v)
		}
	}
	reduced := ""
	for _, w := range f.Redis.LogWarnings {
		if strings.Contains(w, "maxclients has been reduced") {
			reduced = w
			evs = append(evs, doctor.Evidence{Source: "redis log", Value: w})
		}
	}
	soft := int64(-1)
	if p := f.RedisProcess(); p != nil && p.OpenFiles != nil {
		soft = p.OpenFiles.Soft
		evs = append(evs, doctor.Evidence{Source: fmt.Sprintf("/proc/%d/limits Max open files", p.PID), Value: fmt.Sprintf("%d (soft), %d (hard)", p.OpenFiles.Soft, p.OpenFiles.Hard)})
	}
	short := soft >= 0 && soft < want+reservedFDs
	if !short && want == running && reduced == "" {
		if soft < 0 {
			return doctor.Unchecked("the server's open-files limit is not readable (its process is not on this host); maxclients is %d", running)
		}
		return doctor.Pass("open-files limit %d >= maxclients %d + %d", soft, want, reservedFDs).With(evs...)
	}
	return doctor.Fire("the server runs with maxclients %d but was asked for %d; it needs %d open files and its limit is %s", running, want, want+reservedFDs, limitText(soft)).
		With(evs...).WithFix(nofileFix(f, want, running, soft))
}

func limitText(soft int64) string {
	if soft < 0 {
		return "unknown"
	}
	return fmt.Sprint(soft)
}

func nofileFix(f *doctor.Facts, want, running, soft int64) *doctor.Fix {
	need := want + reservedFDs
	fix := &doctor.Fix{NeedsRoot: true}
	fix.Advice = []string{
		fmt.Sprintf("raise the running server's limit: prlimit --pid %s --nofile=%d:%d", redisPid(f), need, need),
		fmt.Sprintf("then restore maxclients: redis-cli CONFIG SET maxclients %d", want),
		fmt.Sprintf("to keep it: LimitNOFILE=%d in the redis-server systemd unit (systemctl edit redis-server), or ulimit -n in its start script; the unit change needs a restart", need),
	}
	if soft >= 0 {
		fix.Advice = append(fix.Advice, fmt.Sprintf("undo: prlimit --pid %s --nofile=%d; redis-cli CONFIG SET maxclients %d", redisPid(f), soft, running))
	}
	return fix
}
