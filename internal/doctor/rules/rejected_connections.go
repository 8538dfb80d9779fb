package rules

import (
	"fmt"

	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "rejected-connections", Section: "redis", Severity: doctor.High,
		Title:  "The server rejected connections",
		Why:    "at maxclients the server answers new clients with an error and closes them (protected mode rejects the same way)",
		Source: "RS networking.c (acceptCommonHandler); RD-cli",
		Needs:  doctor.NeedRedis,
		Proves: []string{"INFO rejected_connections"},
		Check:  checkRejected,
	})
}

func checkRejected(f *doctor.Facts) doctor.Result {
	d, sampled, ev, ok := f.InfoDelta("rejected_connections")
	if !ok {
		return doctor.Skip("INFO has no rejected_connections")
	}
	conn, cev, _ := f.InfoInt("connected_clients")
	maxc, mev, _ := f.ConfigInt("maxclients")
	if d == 0 {
		return doctor.Pass("no rejected connections %s", window(sampled, "since the server started")).With(ev)
	}
	near := maxc > 0 && conn*10 >= maxc*9
	r := doctor.Fire("%d connection(s) rejected %s; %d of maxclients %d connected", d, window(sampled, "since the server started"), conn, maxc).With(ev, cev, mev).
		WithFix(&doctor.Fix{Advice: []string{
			fmt.Sprintf("if clients hit maxclients: raise it (redis-cli CONFIG SET maxclients %d) after checking nofile-maxclients", max(maxc*2, 10000)),
			"if protected-mode rejected remote clients: bind the right address and set a password (protected-mode exists for a reason)",
			"if clients leak connections: check CLIENT LIST for idle ones, set timeout",
		}})
	if !near && !sampled {
		r = r.WithSeverity(doctor.Medium)
	}
	return r
}

func window(sampled bool, otherwise string) string {
	if sampled {
		return "in the sample window"
	}
	return otherwise
}
