package cli

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"redline/internal/lab"
	"redline/internal/labdata"
	"redline/internal/serverhost"
	"redline/internal/steer"
	"redline/internal/tune"
)

// labSteerer is the lab.Steerer built on internal/steer: a steer variant's
// session samples the live host and moves its queue IRQs through tune's
// journal in stateDir (so redline tune rollback restores them even if
// the lab is killed).
type labSteerer struct {
	StateDir string
}

// Start starts steering for the lab's server.
func (l labSteerer) Start(ctx context.Context, spec labdata.SteerSpec, env lab.Env) (lab.SteerSession, error) {
	if !localRedis(env.ServerPID) {
		return nil, fmt.Errorf("the redis-server (pid %d by its INFO) does not run on this host: steer acts on the host it runs on (run the lab on the server's host)", env.ServerPID)
	}
	dir := l.StateDir
	if dir == "" {
		dir = tune.DefaultStateDir
	}
	s, err := steer.StartSession(ctx, serverhost.SteerOptions(spec, []int{env.ServerPID}, nonEmpty(env.ServerNetNS, env.ClientNetNS), dir))
	if err != nil {
		return nil, err
	}
	return labSteerSession{s}, nil
}

type labSteerSession struct{ s *steer.Session }

// Stop stops steering, restores the IRQs and records the session.
func (l labSteerSession) Stop(ctx context.Context) (labdata.SteerSession, error) {
	rec, err := l.s.Stop(ctx)
	out := serverhost.SteerData(rec)
	if err != nil {
		out.RestoreError = err.Error()
	}
	return out, err
}

// localRedis says whether pid is a redis-server on this host (an address
// target's INFO names a pid of its own host).
func localRedis(pid int) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return err == nil && strings.HasPrefix(string(b), "redis-server")
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
