package rules

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "latency-events", Section: "redis", Severity: doctor.Low,
		Title:  "The latency monitor recorded slow events",
		Why:    "each LATENCY LATEST event names where the time went; LATENCY DOCTOR's advice for it, with this host's numbers",
		Source: "RS latency.c (createLatencyReport); RD-lat",
		Needs:  doctor.NeedRedis,
		Proves: []string{"LATENCY LATEST"},
		Check:  checkLatencyEvents,
	})
}

// eventAdvice is LATENCY DOCTOR's advice per event, by event-name prefix.
var eventAdvice = []struct{ prefix, advice string }{
	{"fork", "forks are slow: disable THP, keep the server off a Xen PV guest, lower used memory per instance (see fork-rate)"},
	{"fast-command", "O(1) commands were slow: the host stalls the server (scheduler, swapping, CPU contention); run redis-cli --intrinsic-latency 100 on it"},
	{"command", "slow commands: check SLOWLOG GET for O(N) commands (KEYS, SMEMBERS, big DEL/ZRANGE) and use SCAN or UNLINK"},
	{"aof-fsync-always", "appendfsync always waits for the disk on every write: use everysec or a faster disk (see appendfsync-always)"},
	{"aof-", "AOF writes or fsyncs stalled on the disk: check the disk's latency, or set no-appendfsync-on-rewrite yes"},
	{"expire-cycle", "the active expire cycle ran long: many keys expire at once; spread TTLs, or raise hz (see expire-cycle-hz)"},
	{"eviction-", "evicting keys was slow: maxmemory is hit with large keys; raise maxmemory or use lazyfree-lazy-eviction yes"},
	{"active-defrag", "active defragmentation took long: lower active-defrag-cycle-max"},
	{"rdb-unlink-temp-file", "unlinking the old RDB file was slow: the filesystem is slow to free large files"},
}

func adviceFor(event string) string {
	for _, a := range eventAdvice {
		if strings.HasPrefix(event, a.prefix) {
			return a.advice
		}
	}
	return "see LATENCY DOCTOR"
}

func checkLatencyEvents(f *doctor.Facts) doctor.Result {
	if e := f.Redis.Errors["latency"]; e != "" {
		return doctor.Unchecked("LATENCY LATEST failed: %s", e)
	}
	if len(f.Redis.Latency) == 0 {
		return doctor.Pass("LATENCY LATEST is empty").With(doctor.Ev("LATENCY LATEST", "(empty)"))
	}
	evs := append([]doctor.Evidence(nil), nil...)
	var worst time.Duration
	seen := map[string]bool{}
	var advice []string
	events := append(f.Redis.Latency[:0:0], f.Redis.Latency...)
	sort.Slice(events, func(a, b int) bool { return events[a].Max > events[b].Max })
	for _, e := range events {
		evs = append(evs, doctor.Evidence{Source: "LATENCY LATEST " + e.Event,
			Value: fmt.Sprintf("latest %s, max %s", e.Latest, e.Max), Note: "last at " + e.Time.Format(time.RFC3339)})
		worst = max(worst, e.Max)
		if a := adviceFor(e.Event); !seen[a] {
			seen[a] = true
			advice = append(advice, e.Event+": "+a)
		}
	}
	r := doctor.Fire("%d latency event type(s) recorded, the worst %s (%s)", len(events), worst, events[0].Event).With(evs...).
		WithFix(&doctor.Fix{Advice: advice})
	if worst >= 100*time.Millisecond {
		r = r.WithSeverity(doctor.Medium)
	}
	return r
}
