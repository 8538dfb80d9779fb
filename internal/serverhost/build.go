package serverhost

import (
	"context"
	"errors"
	"fmt"
	"time"

	"redline/internal/buildspec"
	"redline/internal/redisbuild"
)

// Builder builds redis-servers on the host (redline build, a lab's
// server: {build: ...}): the compilers are where the server runs. A
// refused spec (the session's rules, or one the host cannot build as
// asked) is a redisbuild.SpecError, on either side of a session.
type Builder interface {
	Build(ctx context.Context, a BuildArgs) (buildspec.Provenance, error)
}

// BuildTimeout bounds a build on a remote host (an LTO or PGO build of
// Redis takes tens of minutes on a small host); the session's heartbeat
// says meanwhile that the link is alive.
const BuildTimeout = 3 * time.Hour

// Build builds on this machine, in LocalOptions.BuildCache.
func (l *Local) Build(ctx context.Context, a BuildArgs) (buildspec.Provenance, error) {
	return redisbuild.Build(ctx, a.Spec, redisbuild.Options{Cache: l.o.BuildCache, Jobs: a.Jobs,
		Workload: a.Workload, Progress: l.o.BuildProgress})
}

// Build builds there, in the session host's build cache.
func (r *Remote) Build(ctx context.Context, a BuildArgs) (buildspec.Provenance, error) {
	var out BuildResult
	if err := r.call(ctx, BuildTimeout, OpBuild, a, &out); err != nil {
		return buildspec.Provenance{}, err
	}
	switch {
	case out.Refused != "":
		return buildspec.Provenance{}, redisbuild.SpecError{Err: fmt.Errorf("%s (refused by the session on %s)", out.Refused, r.Info().Hostname)}
	case out.Error != "":
		return buildspec.Provenance{}, fmt.Errorf("%s (on %s)", out.Error, r.Info().Hostname)
	case out.Provenance == nil:
		return buildspec.Provenance{}, errors.New("build: the session answered without a provenance")
	}
	return *out.Provenance, nil
}

// maxBuildJobs bounds a client's make -j.
const maxBuildJobs = 1024

// build checks a build request (redisbuild.CheckSession: compiler by name
// from a root-owned directory, source debian or root-owned, flags that are
// compiler flags) and runs it with the Local, in the session host's own
// cache. Its own validator: a refused spec is a result (BuildResult.Refused),
// not an error.
func (h *handler) build(ctx context.Context, a *BuildArgs) (any, error) {
	refused := func(err error) (any, error) { return BuildResult{Refused: err.Error()}, nil }
	if a.Jobs < 0 || a.Jobs > maxBuildJobs {
		return refused(fmt.Errorf("build: jobs %d: want 0 (the CPUs) to %d", a.Jobs, maxBuildJobs))
	}
	if err := redisbuild.CheckWorkload(a.Workload); err != nil {
		return refused(err)
	}
	spec, err := redisbuild.CheckSession(a.Spec)
	if err != nil {
		return refused(err)
	}
	a.Spec = spec
	prov, err := h.l.Build(ctx, *a)
	switch {
	case errors.As(err, new(redisbuild.SpecError)):
		return refused(err)
	case err != nil:
		return BuildResult{Error: err.Error()}, nil
	}
	return BuildResult{Provenance: &prov}, nil
}
