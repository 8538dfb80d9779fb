package rules

import (
	"fmt"

	"redline/internal/change"
	"redline/internal/doctor"
	"redline/internal/host"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "maxmemory", Section: "memory", Severity: doctor.Medium,
		Title:  "maxmemory is unset, tiny, or leaves no headroom",
		Why:    "without maxmemory the OOM killer decides when memory runs out; above ~90% of RAM or the cgroup limit there is no room for fork copy-on-write, buffers and fragmentation",
		Source: "RD-adm (set it, leave headroom); RS server.c (warns below 1 MB)",
		Reads:  []string{"meminfo"},
		Needs:  doctor.NeedRedis | doctor.NeedHost,
		Proves: []string{"CONFIG GET maxmemory"},
		Check:  checkMaxmemory,
	})
}

func checkMaxmemory(f *doctor.Facts) doctor.Result {
	mm, ev, ok := f.ConfigInt("maxmemory")
	if !ok {
		return doctor.Unchecked("CONFIG GET maxmemory failed")
	}
	limit, lev, haveLimit := memoryLimit(f)
	evs := []doctor.Evidence{ev}
	if haveLimit {
		evs = append(evs, lev)
	}
	suggest := uint64(0)
	if haveLimit {
		suggest = limit / 10 * 8
	}
	switch {
	case mm > 0 && mm < 1<<20:
		return doctor.Fire("maxmemory is %d bytes, below 1 MB: almost every write fails or evicts", mm).With(evs...).
			WithFix(setMaxmemory(suggest, ev.Value)).WithSeverity(doctor.High)
	case mm == 0:
		return doctor.Fire("maxmemory is 0 (no limit): when memory runs out the OOM killer ends the server").With(evs...).
			WithFix(setMaxmemory(suggest, ev.Value)).WithSeverity(doctor.Low)
	case haveLimit && uint64(mm) > limit/10*9:
		return doctor.Fire("maxmemory %s is over 90%% of the %s the server can use", doctor.Bytes(uint64(mm)), doctor.Bytes(limit)).With(evs...).
			WithFix(setMaxmemory(suggest, ev.Value))
	}
	return doctor.Pass("maxmemory %s", doctor.Bytes(uint64(mm))).With(evs...)
}

func setMaxmemory(bytes uint64, old string) *doctor.Fix {
	if bytes == 0 {
		return &doctor.Fix{Advice: []string{"set maxmemory to about 80% of the memory the server may use (RAM or its cgroup limit)"}}
	}
	fix := new(doctor.Fix).Set(change.KindRedisConfig, "maxmemory", fmt.Sprint(bytes), old, "80% of the memory the server may use")
	fix.Advice = []string{"choose maxmemory-policy to match the data (allkeys-lru for a cache, noeviction for a store); persist with CONFIG REWRITE"}
	return fix
}

// memoryLimit is the memory the server may use: its cgroup's memory.max,
// else the host's MemTotal (none for a server on another host); shared
// evenly with the other redis-servers on this host under the same limit
// (cluster nodes or not, each server's maxmemory counts against the same
// RAM: 80% of the host for each of four servers is 320% of it).
func memoryLimit(f *doctor.Facts) (uint64, doctor.Evidence, bool) {
	limit, ev, ok := uint64(0), doctor.Evidence{}, false
	p := f.RedisProcess()
	switch {
	case f.HasRedis() && !f.Redis.Process.Local:
		// This host's memory says nothing about a server on another.
	case p != nil && p.Cgroup != nil && p.Cgroup.MemoryMax != nil:
		limit, ev, ok = *p.Cgroup.MemoryMax, doctor.Ev("cgroup "+p.Cgroup.Path+" memory.max", doctor.Bytes(*p.Cgroup.MemoryMax)), true
	case f.Host != nil && f.Host.Memory.MemTotal != nil:
		limit, ev, ok = *f.Host.Memory.MemTotal, doctor.Ev("/proc/meminfo MemTotal", doctor.Bytes(*f.Host.Memory.MemTotal)), true
	}
	if n := sharingServers(f, p); ok && n > 1 {
		limit /= uint64(n)
		what := "redis-servers"
		if f.Node != nil {
			what = "cluster nodes"
		}
		ev.Note = fmt.Sprintf("shared by %d %s on this host: %s each", n, what, doctor.Bytes(limit))
	}
	return limit, ev, ok
}

// sharingServers counts the redis-servers on this host under the same
// limit as p: in its cgroup when that has a limit, else every one the
// snapshot holds (a cluster's snapshot holds exactly the local nodes).
func sharingServers(f *doctor.Facts, p *host.Process) int {
	if f.Host == nil {
		return 0
	}
	n := 0
	if p == nil || p.Cgroup == nil || p.Cgroup.MemoryMax == nil {
		n = len(f.Host.OtherServers) // not described, but in the host's memory
	}
	for _, q := range f.Host.Processes {
		if p == nil || p.Cgroup == nil || p.Cgroup.MemoryMax == nil || q.Cgroup != nil && q.Cgroup.Path == p.Cgroup.Path {
			n++
		}
	}
	return n
}
