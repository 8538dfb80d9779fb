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
	fmt.Fprintf(w, "%scluster: %d nodes; %d MOVED and %d ASK redirections followed, %d topology refreshes\n",
		indent, len(c.Nodes), c.Moved, c.Asked, c.Refreshes)
	for _, n := range c.Nodes {
		share := 0.0
		if s.Requests > 0 {
			share = 100 * float64(n.Requests) / float64(s.Requests)
		}
		what := fmt.Sprintf("%5d slots (%5.1f%%)", n.Slots, 100*float64(n.Slots)/ClusterSlots)
		if n.Role == "replica" {
			what = "replica of " + n.Primary
		}
		fmt.Fprintf(w, "%s  %-21s %s %5.1f%% of requests: %.2f requests per second, p50=%.3f p99=%.3f max=%.3f msec\n",
			indent, n.Addr, what, share, n.RPS, n.Latency.P50, n.Latency.P99, n.Latency.Max)
	}
}
