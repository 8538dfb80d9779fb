package guard

import (
	"time"

	"redline/internal/redisadmin"
)

// Sample is INFO's counters at one moment.
type Sample struct {
	At           time.Time `json:"at"`
	CPUSeconds   float64   `json:"cpu_seconds"`
	Commands     int64     `json:"commands"` // total_commands_processed
	Calls        int64     `json:"calls"`    // commandstats calls, all commands
	Usec         int64     `json:"usec"`     // commandstats usec, all commands
	ErrorReplies int64     `json:"error_replies"`
	Rejected     int64     `json:"rejected_connections"`
	Evicted      int64     `json:"evicted_keys"`
	UsedMemory   int64     `json:"used_memory"`
	RSS          int64     `json:"used_memory_rss"`
	MaxMemory    int64     `json:"maxmemory"`
	HostMemory   int64     `json:"total_system_memory"`
	// Latencystats are the server's own cumulative percentiles (Redis 7+),
	// kept as evidence: they cover the server's life, not a window.
	Latencystats []redisadmin.Percentiles `json:"latencystats,omitempty"`
}

// SampleOf reads a Sample from an INFO reply taken at at.
func SampleOf(info *redisadmin.Info, at time.Time) Sample {
	s := Sample{At: at, CPUSeconds: info.CPUSeconds()}
	s.Commands, _ = info.Int("total_commands_processed")
	for _, c := range info.Commandstats() {
		s.Calls += c.Calls
		s.Usec += c.Usec
	}
	if v, ok := info.Int("total_error_replies"); ok {
		s.ErrorReplies = v
	} else {
		for _, n := range info.Errorstats() {
			s.ErrorReplies += n
		}
	}
	s.Rejected, _ = info.Int("rejected_connections")
	s.Evicted, _ = info.Int("evicted_keys")
	s.UsedMemory, _ = info.Int("used_memory")
	s.RSS, _ = info.Int("used_memory_rss")
	s.MaxMemory, _ = info.Int("maxmemory")
	s.HostMemory, _ = info.Int("total_system_memory")
	s.Latencystats = info.Latencystats()
	return s
}

// Tick is one interval of the watch: the probe's replies in it and the
// server's counters between its two samples.
type Tick struct {
	Seconds float64 `json:"seconds"`
	// ProbeRequests and ProbeP99Ms are the probe's replies in the tick and
	// their 99th percentile, timed from the intended send times.
	ProbeRequests int64   `json:"probe_requests"`
	ProbeP99Ms    float64 `json:"probe_p99_ms"`
	// CPU is the server's CPU time per second (cores).
	CPU float64 `json:"cpu"`
	// Per-second rates of the counters.
	CommandsPerSec float64 `json:"commands_per_sec"`
	ErrorsPerSec   float64 `json:"errors_per_sec"`
	RejectedPerSec float64 `json:"rejected_per_sec"`
	EvictedPerSec  float64 `json:"evicted_per_sec"`
	// Calls and Usec are commandstats' deltas (server-side time).
	Calls int64 `json:"calls"`
	Usec  int64 `json:"usec"`
	// Memory at the tick's end.
	UsedMemory int64 `json:"used_memory"`
	RSS        int64 `json:"used_memory_rss"`
	MaxMemory  int64 `json:"maxmemory"`
	HostMemory int64 `json:"total_system_memory"`
}

// TickOf is the tick between samples a and b, with the probe's figures.
func TickOf(a, b Sample, probeRequests int64, probeP99Ms float64) Tick {
	sec := b.At.Sub(a.At).Seconds()
	if sec <= 0 {
		sec = 1e-9
	}
	rate := func(x, y int64) float64 { return float64(max(y-x, 0)) / sec }
	return Tick{
		Seconds: sec, ProbeRequests: probeRequests, ProbeP99Ms: probeP99Ms,
		CPU:            max(b.CPUSeconds-a.CPUSeconds, 0) / sec,
		CommandsPerSec: rate(a.Commands, b.Commands),
		ErrorsPerSec:   rate(a.ErrorReplies, b.ErrorReplies),
		RejectedPerSec: rate(a.Rejected, b.Rejected),
		EvictedPerSec:  rate(a.Evicted, b.Evicted),
		Calls:          max(b.Calls-a.Calls, 0),
		Usec:           max(b.Usec-a.Usec, 0),
		UsedMemory:     b.UsedMemory, RSS: b.RSS, MaxMemory: b.MaxMemory, HostMemory: b.HostMemory,
	}
}
