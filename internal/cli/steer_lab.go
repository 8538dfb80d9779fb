package cli

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"redline/internal/lab"
	"redline/internal/labdata"
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
	s, err := steer.StartSession(ctx, steer.SessionOptions{
		Period: spec.Period, Sample: spec.Sample, Domain: spec.Domain, PIDs: []int{env.ServerPID}, DryRun: spec.DryRun, StateDir: dir,
		NetNS:  nonEmpty(env.ServerNetNS, env.ClientNetNS),
		Engine: steer.Options{Periods: spec.Periods, Majority: float64(spec.Majority), MinPackets: spec.MinPackets},
	})
	if err != nil {
		return nil, err
	}
	return labSteerSession{s}, nil
}

type labSteerSession struct{ s *steer.Session }

// Stop stops steering, restores the IRQs and records the session.
func (l labSteerSession) Stop(ctx context.Context) (labdata.SteerSession, error) {
	rec, err := l.s.Stop(ctx)
	out := steerSessionData(rec)
	if err != nil {
		out.RestoreError = err.Error()
	}
	return out, err
}

// steerSessionData is a steer session as the lab records it.
func steerSessionData(rec steer.SessionRecord) labdata.SteerSession {
	out := labdata.SteerSession{Started: rec.Started, Finished: rec.Finished, DryRun: rec.DryRun, Periods: rec.Periods,
		SamplerCPU: rec.SamplerCPU, Events: rec.Sampler.Events, Lost: rec.Sampler.Lost,
		Restored: rec.Restored, Irqbalance: rec.Irqbalance, Notes: rec.NotDone}
	if rec.RunError != "" {
		out.Notes = append(out.Notes, "steer stopped early: "+rec.RunError)
	}
	for _, m := range rec.Moves {
		out.Moves = append(out.Moves, labdata.SteerMove{Time: m.Time, IRQ: m.IRQ, Queue: queueName(m.Queue),
			From: m.From.List(), To: m.To, Reason: m.Reason})
	}
	for _, d := range rec.Drifts {
		out.Drifts = append(out.Drifts, fmt.Sprintf("irq %d (%s): steer wrote %s, now %s", d.IRQ, queueName(d.Queue), d.Wrote.List(), d.Now.List()))
	}
	out.Final = steerFinalMap(rec)
	return out
}

// steerFinalMap is each queue the session saw: its IRQ where it has one
// (as of the last period) and where its packets were consumed. Queues
// without an IRQ (veth) are seen but never moved.
func steerFinalMap(rec steer.SessionRecord) []labdata.SteerQueue {
	var out []labdata.SteerQueue
	seen := map[steer.QueueKey]bool{}
	if rec.Last != nil {
		for _, q := range rec.Last.Decision.Queues {
			sq := labdata.SteerQueue{Queue: queueName(q.Queue), IRQ: q.IRQ, On: q.On.List(), Preferred: q.Preferred, Drifted: q.Drifted}
			if t := rec.Queues[q.Queue]; t != nil {
				sq.Matched, sq.Consumers = t.Matched, t.Consumers
			}
			out, seen[q.Queue] = append(out, sq), true
		}
	}
	keys := make([]steer.QueueKey, 0, len(rec.Queues))
	for k := range rec.Queues {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b steer.QueueKey) int {
		return cmp.Or(strings.Compare(a.Dev, b.Dev), cmp.Compare(a.Queue, b.Queue))
	})
	for _, k := range keys {
		if t := rec.Queues[k]; !seen[k] && t.Matched > 0 {
			out = append(out, labdata.SteerQueue{Queue: queueName(k), Matched: t.Matched, Consumers: t.Consumers})
		}
	}
	return out
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

func queueName(k steer.QueueKey) string { return k.Dev + " rx-" + strconv.Itoa(k.Queue) }
