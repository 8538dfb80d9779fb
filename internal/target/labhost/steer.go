package labhost

import (
	"context"
	"fmt"
	"time"

	"redline/internal/lab"
	"redline/internal/labdata"
	"redline/internal/serverhost"
)

// hostSteerer is the lab.Steerer of a server host (this machine, or a
// session's): a steer variant's steer runs there for the lab's server,
// its moves journaled in the host's state directory, so redline tune
// rollback (with --ssh for a session's) restores them even if the lab is
// killed, and a session restores them by itself if its link dies.
type hostSteerer struct {
	host func(lab.Env) serverhost.Host
	// adopt has the host attach the lab's server first (its pid from its
	// own INFO, checked to be a redis-server of the host): a server the
	// lab started or found itself, not one the host started.
	adopt bool
	// lost says whether a remote host's link died (nil: it cannot).
	lost func() bool
	// restoreFailed, when set, says what a failed restore left and how to
	// restore it by hand (nil: the lab's own advice is enough).
	restoreFailed func(msg string) error
}

// Start starts steer on the host for the lab's server.
func (st hostSteerer) Start(ctx context.Context, spec labdata.SteerSpec, env lab.Env) (lab.SteerSession, error) {
	h := st.host(env)
	pid := env.ServerPID
	if st.adopt {
		a, err := h.RedisAttach(ctx, *labRedis(env))
		if err != nil {
			return nil, fmt.Errorf("the lab's server at %s: %w: steer acts on the host the server runs on (run the lab there)", env.RedisAddr, err)
		}
		pid = a.Pid
	}
	id, err := h.SteerStart(ctx, spec, pid)
	if err != nil {
		return nil, err
	}
	return hostSteerSession{st: st, h: h, id: id}, nil
}

type hostSteerSession struct {
	st hostSteerer
	h  serverhost.Host
	id string
}

func (ss hostSteerSession) lost() bool { return ss.st.lost != nil && ss.st.lost() }

// Stop stops steer on the host, which restores the IRQs it moved; after a
// lost link the session has done so by itself (remote_cleanup says).
func (ss hostSteerSession) Stop(ctx context.Context) (labdata.SteerSession, error) {
	if ss.lost() {
		return labdata.SteerSession{Finished: time.Now(), Notes: []string{"the link to the server host was lost: its session stopped steer and restored the IRQs by itself (see what the server host restored)"}}, nil
	}
	rec, err := ss.h.SteerStop(ctx, ss.id)
	if err != nil && rec.RestoreError != "" && ss.st.restoreFailed != nil && !ss.lost() {
		return rec, ss.st.restoreFailed(rec.RestoreError)
	}
	return rec, err
}
