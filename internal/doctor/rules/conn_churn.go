package rules

import (
	"fmt"

	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "connection-churn", Section: "client", Severity: doctor.Medium,
		Title:  "Clients connect and disconnect all the time",
		Why:    "each connect costs the server an accept, a TCP handshake and a client allocation on the main thread, and the client a local port in TIME_WAIT: \"do not systematically connect/disconnect\"",
		Source: "RD-lat (connection handling); RD-cli",
		Needs:  doctor.NeedRedis,
		Proves: []string{"INFO total_connections_received"},
		Check:  checkChurn,
	})
}

// churnRate is the connect rate, per second, above which churn matters.
const churnRate = 50

func checkChurn(f *doctor.Facts) doctor.Result {
	total, sampled, ev, ok := f.InfoDelta("total_connections_received")
	if !ok {
		return doctor.Skip("INFO has no total_connections_received")
	}
	secs := f.Interval.Seconds()
	if !sampled {
		up, _ := f.Info().Int("uptime_in_seconds")
		secs = float64(max(up, 1))
	}
	rate := float64(total) / secs
	conn, cev, _ := f.InfoInt("connected_clients")
	rev := doctor.Evidence{Source: "connect rate", Value: fmt.Sprintf("%.1f/s", rate), Note: window(sampled, "averaged over the server's uptime")}
	if rate < churnRate || rate < float64(conn) {
		return doctor.Pass("%.1f connects/s for %d connected clients", rate, conn).With(ev, cev, rev)
	}
	return doctor.Fire("%.0f connects per second for %d connected clients: clients reconnect instead of reusing connections", rate, conn).With(ev, cev, rev).
		WithFix(&doctor.Fix{Advice: []string{
			"use a connection pool in the clients (keep connections open, reuse them)",
			"batch with pipelining or MGET/MSET instead of a connection per request",
		}})
}
