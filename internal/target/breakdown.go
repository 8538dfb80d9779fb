package target

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"redline/internal/autotune"
	"redline/internal/profile"
	"redline/internal/redisadmin"
)

// measureSampled is measure with where the server's time went around it:
// the lab's per-run breakdown (profile.ReadSnapshot of the server host's
// counters, served by the host's Sample, before and after the run, and
// profile.Compare) and the server's time by command (INFO commandstats,
// after less before). What cannot be taken is left out; the report says
// so.
func (t *Target) measureSampled(ctx context.Context, srv *trialServer) (autotune.Measurement, error) {
	before, serr := t.snapshot(ctx, srv.pid)
	cmdsBefore, cerr := commandStats(ctx, srv)
	m, err := t.measure(ctx, srv.addr)
	if err != nil {
		return m, err
	}
	if after, aerr := t.snapshot(ctx, srv.pid); serr == nil && aerr == nil {
		m.Breakdown = profile.Compare(before, after, srv.pid)
	}
	if cmdsAfter, aerr := commandStats(ctx, srv); cerr == nil && aerr == nil {
		m.Commands = commandTimes(cmdsBefore, cmdsAfter)
	}
	return m, nil
}

// commandTimes is after less before, per command, busiest first; INFO
// itself (the sampling's own) is left out.
func commandTimes(before, after []redisadmin.CommandStat) []autotune.CommandTime {
	was := map[string]redisadmin.CommandStat{}
	for _, c := range before {
		was[c.Command] = c
	}
	var out []autotune.CommandTime
	for _, c := range after {
		d := autotune.CommandTime{Command: c.Command, Calls: c.Calls - was[c.Command].Calls, Usec: c.Usec - was[c.Command].Usec}
		if d.Calls > 0 && c.Command != "info" {
			out = append(out, d)
		}
	}
	slices.SortStableFunc(out, func(a, b autotune.CommandTime) int { return cmp.Compare(b.Usec, a.Usec) })
	return out
}

// snapshot reads the server host's counters now, pid's threads among them.
func (t *Target) snapshot(ctx context.Context, pid int) (*profile.Snapshot, error) {
	fsys, err := t.host.Sample(ctx)
	if err != nil {
		return nil, err
	}
	if fsys == nil {
		return nil, fmt.Errorf("the server host serves no counters")
	}
	return profile.ReadSnapshot(profile.BreakdownOptions{FS: fsys, PID: pid})
}
