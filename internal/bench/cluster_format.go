package bench

import (
	"fmt"
	"io"

	"redline/internal/benchdata"
)

// writeClusterNodes writes one line per primary, so a hot shard shows:
// its share of the slots against its share of the requests.
func writeClusterNodes(w io.Writer, indent string, s *benchdata.Summary) {
	c := s.Cluster
	fmt.Fprintf(w, "%scluster: %d primaries; %d MOVED and %d ASK redirections followed, %d topology refreshes\n",
		indent, len(c.Nodes), c.Moved, c.Asked, c.Refreshes)
	for _, n := range c.Nodes {
		share := 0.0
		if s.Requests > 0 {
			share = 100 * float64(n.Requests) / float64(s.Requests)
		}
		fmt.Fprintf(w, "%s  %-21s %5d slots (%5.1f%%) %5.1f%% of requests: %.2f requests per second, p50=%.3f p99=%.3f max=%.3f msec\n",
			indent, n.Addr, n.Slots, 100*float64(n.Slots)/ClusterSlots, share, n.RPS, n.Latency.P50, n.Latency.P99, n.Latency.Max)
	}
}
