package cli

import (
	"context"
	"fmt"

	"redline/internal/autotune"
	"redline/internal/profile"
)

// measureSampled is measure with where the server's time went around it:
// the lab's per-run breakdown (profile.ReadSnapshot of the server host's
// counters, served by the host's Sample, before and after the run, and
// profile.Compare). A breakdown that cannot be taken leaves the
// measurement without one; the report says so.
func (t *localTarget) measureSampled(ctx context.Context, srv *trialServer) (autotune.Measurement, error) {
	before, serr := t.snapshot(ctx, srv.pid)
	m, err := t.measure(ctx, srv.addr)
	if err != nil || serr != nil {
		return m, err
	}
	if after, serr := t.snapshot(ctx, srv.pid); serr == nil {
		m.Breakdown = profile.Compare(before, after, srv.pid)
	}
	return m, nil
}

// snapshot reads the server host's counters now, pid's threads among them.
func (t *localTarget) snapshot(ctx context.Context, pid int) (*profile.Snapshot, error) {
	fsys, err := t.host.Sample(ctx)
	if err != nil {
		return nil, err
	}
	if fsys == nil {
		return nil, fmt.Errorf("the server host serves no counters")
	}
	return profile.ReadSnapshot(profile.BreakdownOptions{FS: fsys, PID: pid})
}
