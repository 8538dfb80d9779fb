package serverhost

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"redline/internal/steer"
	"redline/internal/steerspec"
)

// SteerData is a steer session as a lab records it (labdata, the saved
// schema, which the engines do not import: this adapter converts).
func SteerData(rec steer.SessionRecord) steerspec.Session {
	out := steerspec.Session{Started: rec.Started, Finished: rec.Finished, DryRun: rec.DryRun, Periods: rec.Periods,
		SamplerCPU: rec.SamplerCPU, Events: rec.Sampler.Events, Lost: rec.Sampler.Lost,
		Restored: rec.Restored, Irqbalance: rec.Irqbalance, Notes: rec.NotDone}
	if rec.RunError != "" {
		out.Notes = append(out.Notes, "steer stopped early: "+rec.RunError)
	}
	for _, m := range rec.Moves {
		out.Moves = append(out.Moves, steerspec.Move{Time: m.Time, IRQ: m.IRQ, Queue: queueName(m.Queue),
			From: m.From.List(), To: m.To, Reason: m.Reason})
	}
	for _, d := range rec.Drifts {
		out.Drifts = append(out.Drifts, fmt.Sprintf("irq %d (%s): steer wrote %s, now %s", d.IRQ, queueName(d.Queue), d.Wrote.List(), d.Now.List()))
	}
	out.Final = finalMap(rec)
	return out
}

// finalMap is each queue the session saw: its IRQ where it has one
// (as of the last period) and where its packets were consumed. Queues
// without an IRQ (veth) are seen but never moved.
func finalMap(rec steer.SessionRecord) []steerspec.Queue {
	var out []steerspec.Queue
	seen := map[steer.QueueKey]bool{}
	if rec.Last != nil {
		for _, q := range rec.Last.Decision.Queues {
			sq := steerspec.Queue{Queue: queueName(q.Queue), IRQ: q.IRQ, On: q.On.List(), Preferred: q.Preferred, Drifted: q.Drifted}
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
			out = append(out, steerspec.Queue{Queue: queueName(k), Matched: t.Matched, Consumers: t.Consumers})
		}
	}
	return out
}

func queueName(k steer.QueueKey) string { return k.Dev + " rx-" + strconv.Itoa(k.Queue) }
