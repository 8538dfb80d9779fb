package lab

import (
	"context"
	"fmt"
	"time"

	"redline/internal/labdata"
)

// Steerer starts redline steer for a variant (the adapter over
// internal/steer lives in cli, so the lab links neither steer nor tune).
type Steerer interface {
	// Start begins steering for the server env names; the session runs
	// until Stop.
	Start(ctx context.Context, spec labdata.SteerSpec, env Env) (SteerSession, error)
}

// SteerSession is a running steer.
type SteerSession interface {
	// Stop ends steering, restores every IRQ steer moved and says what it
	// did; the record is filled in even when the restore fails.
	Stop(ctx context.Context) (labdata.SteerSession, error)
}

// steering is the steer session of the variant running now.
type steering struct {
	vi, rep int
	s       SteerSession
}

// startSteer starts steer when variant vi asks for it.
func (l *labRun) startSteer(ctx context.Context, vi, rep int) error {
	v := l.s.Variants[vi]
	if v.Steer == nil {
		return nil
	}
	l.event(Event{Message: "starting steer for variant " + v.Name, Variant: v.Name, Rep: rep})
	s, err := l.o.Steerer.Start(ctx, *v.Steer, l.env)
	if err != nil {
		return fmt.Errorf("variant %s: steer: %w", v.Name, err)
	}
	l.steer = &steering{vi: vi, rep: rep, s: s}
	return nil
}

// stopSteer stops the running steer, if any, restoring every IRQ it
// moved (also when ctx is cancelled: the host must be restored), and
// records what it did.
func (l *labRun) stopSteer(ctx context.Context) error {
	st := l.steer
	if st == nil {
		return nil
	}
	l.steer = nil
	name := l.s.Variants[st.vi].Name
	l.event(Event{Message: "stopping steer for variant " + name + " (restoring the IRQs it moved)", Variant: name})
	rec, err := st.s.Stop(context.WithoutCancel(ctx))
	rec.Rep = st.rep
	if rec.Finished.IsZero() {
		rec.Finished = time.Now()
	}
	v := &l.res.Variants[st.vi]
	v.Steer = append(v.Steer, rec)
	if err != nil {
		return fmt.Errorf("variant %s: steer: %w (run redline tune rollback to restore the IRQs)", name, err)
	}
	return nil
}

// describeSteer is a steer variant's description for the report.
func describeSteer(s *labdata.SteerSpec) string {
	d := "redline steer during the runs"
	if s.DryRun {
		d = "redline steer --dry-run during the runs (decides, moves nothing)"
	}
	if s.Domain != "" {
		d += ", domain " + s.Domain
	}
	return d
}

// validateSteer checks a variant's steer: settings the way redline steer
// checks its flags.
func validateSteer(v labdata.VariantSpec, kind, path string, bad func(path, format string, args ...any)) {
	s := v.Steer
	if s == nil {
		return
	}
	p := path + ".steer"
	if v.Baseline {
		bad(p, "the baseline variant cannot steer")
	}
	s.Check(func(field, format string, args ...any) { bad(p+"."+field, format, args...) })
}
