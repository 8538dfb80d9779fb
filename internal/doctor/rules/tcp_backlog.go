package rules

import (
	"fmt"

	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "tcp-backlog-low", Section: "redis", Severity: doctor.Medium,
		Title:  "tcp-backlog is below the clients that connect at once",
		Why:    "when many clients connect together (a restart, a failover, a benchmark with -c 5000) the accept queue overflows and connects wait 1 s or fail",
		Source: "RS-conf tcp-backlog; W (5000 clients)",
		Needs:  doctor.NeedRedis,
		Proves: []string{"CONFIG GET tcp-backlog"},
		Check:  checkTCPBacklog,
	})
}

func checkTCPBacklog(f *doctor.Facts) doctor.Result {
	backlog, bev, ok := f.ConfigInt("tcp-backlog")
	if !ok {
		return doctor.Unchecked("CONFIG GET tcp-backlog failed")
	}
	conn, cev, _ := f.InfoInt("connected_clients")
	want, evs := conn, []doctor.Evidence{bev, cev}
	if c := int64(f.ExpectedClients); c > want {
		want = c
		evs = append(evs, doctor.Ev("expected simultaneous clients (--clients)", c))
	}
	if backlog >= want {
		return doctor.Pass("tcp-backlog %d covers %d clients", backlog, want).With(evs...)
	}
	target := max(want, 4096)
	return doctor.Fire("tcp-backlog %d is below the %d clients that may connect at once", backlog, want).With(evs...).
		WithFix(&doctor.Fix{NeedsRedisRestart: true, Advice: []string{
			fmt.Sprintf("set tcp-backlog %d in redis.conf and restart the server (it is read at listen(); CONFIG SET cannot change it)", target),
			fmt.Sprintf("raise net.core.somaxconn and net.ipv4.tcp_max_syn_backlog to at least %d first (see somaxconn, syn-backlog)", target),
		}})
}
