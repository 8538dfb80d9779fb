package redisadmin

import (
	"fmt"
	"strconv"
	"time"

	"redline/internal/resp"
)

// LatencyEvent is one row of LATENCY LATEST: the event ("command",
// "fast-command", "fork", "expire-cycle", "aof-fsync-always" ...), when it
// last happened, and its latest and all-time maximum latency.
type LatencyEvent struct {
	Event  string        `json:"event"`
	Time   time.Time     `json:"time"`
	Latest time.Duration `json:"latest"`
	Max    time.Duration `json:"max"`
}

// parseLatencyLatest reads the LATENCY LATEST reply: an array of
// [event, unix-seconds, latest-ms, max-ms, ...] (newer servers append
// fields, which are ignored).
func parseLatencyLatest(v resp.Value) ([]LatencyEvent, error) {
	if v.IsError() {
		return nil, v.Err()
	}
	out := make([]LatencyEvent, 0, len(v.Elems))
	for _, row := range v.Elems {
		if len(row.Elems) < 4 {
			return nil, fmt.Errorf("LATENCY LATEST row has %d fields, want at least 4", len(row.Elems))
		}
		var n [3]int64
		for k := range n {
			x, err := strconv.ParseInt(row.Elems[k+1].Str, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("LATENCY LATEST %s: field %d: %w", row.Elems[0].Str, k+2, err)
			}
			n[k] = x
		}
		out = append(out, LatencyEvent{
			Event:  row.Elems[0].Str,
			Time:   time.Unix(n[0], 0).UTC(),
			Latest: time.Duration(n[1]) * time.Millisecond,
			Max:    time.Duration(n[2]) * time.Millisecond,
		})
	}
	return out, nil
}
