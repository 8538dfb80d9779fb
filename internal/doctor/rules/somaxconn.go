package rules

import (
	"fmt"

	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "somaxconn", Section: "tcp", Severity: doctor.High,
		Title:  "net.core.somaxconn caps the server's listen backlog",
		Why:    "listen() silently caps the accept queue at somaxconn (per network namespace); connects beyond it are dropped and retried after 1 s",
		Source: "RS server.c checkTcpBacklogSettings; K-src net/socket.c __sys_listen; K-ip; W (128 failed 5000 clients)",
		Reads:  []string{"sysctls"},
		Needs:  doctor.NeedHost | doctor.ReadsRedis | doctor.PerNetNS,
		Proves: []string{"/proc/sys/net/core/somaxconn", "*tcp-backlog"},
		Check:  checkSomaxconn,
	})
}

// defaultTCPBacklog is redis.conf's tcp-backlog default, used when no
// server was checked.
const defaultTCPBacklog = 511

func checkSomaxconn(f *doctor.Facts) doctor.Result {
	somax, ev, ok := f.SysctlInt("net.core.somaxconn")
	if !ok {
		return doctor.Skip("net.core.somaxconn is not readable")
	}
	backlog, bev, haveBacklog := f.ConfigInt("tcp-backlog")
	evs := []doctor.Evidence{ev}
	if haveBacklog {
		evs = append(evs, bev)
	} else {
		backlog = defaultTCPBacklog
		evs = append(evs, doctor.Evidence{Source: "tcp-backlog", Value: fmt.Sprint(backlog), Note: "redis.conf default; no server checked"})
	}
	want := backlog
	if c := int64(f.ExpectedClients); c > want {
		want = c
		evs = append(evs, doctor.Ev("expected simultaneous clients (--clients)", c))
	}
	if somax >= want {
		return doctor.Pass("somaxconn %d >= %d", somax, want).With(evs...)
	}
	target := max(want, 4096)
	fix := new(doctor.Fix).Sysctl("net.core.somaxconn", fmt.Sprint(target), ev.Value, "let listen() take the full tcp-backlog")
	fix.NeedsRedisRestart = true
	fix.Advice = []string{"the cap is applied when the server calls listen(): restart redis-server (or fail over) after raising it"}
	msg := fmt.Sprintf("somaxconn %d is below tcp-backlog %d: the kernel caps the accept queue at %d", somax, backlog, somax)
	if somax >= backlog {
		msg = fmt.Sprintf("somaxconn %d is below the %d clients expected to connect at once", somax, want)
	}
	r := doctor.Fire("%s", msg).With(evs...).WithFix(fix)
	if !haveBacklog {
		r = r.WithSeverity(doctor.Medium)
	}
	return r
}
