package target

// autotune's server.build knob (issue 28's autotune variant): the user
// names build specs, --build NAME=SPEC with SPEC in redline build's flags;
// each is built (or found in the cache) by the server host's Builder
// before the session's first measurement, and a trial with
// server.build=NAME runs on a server started from that binary, beside the
// baseline's like every start-up knob (trial.go). The specs and
// their provenance are journaled with the session's target, so --resume
// builds the same specs, finds the same binaries in the cache, and
// refuses to go on when a spec now makes another binary.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"redline/internal/autotune"
	"redline/internal/buildspec"
	"redline/internal/redisbuild"
	"redline/internal/serverhost"
)

// Build is one --build NAME=SPEC and, once built, what was built.
type Build struct {
	Name  string                `json:"name"`
	Spec  buildspec.Spec        `json:"spec"`
	Built *buildspec.Provenance `json:"built,omitempty"`
}

// buildServers builds every --build spec on the server host (its Builder:
// this machine's cache, or the session's there), before the first
// measurement; a PGO spec that names no training trains with the
// session's workload. An attached server is never restarted, so nothing
// is built for it (server.build is untested, cannotStart says why). Each
// build's provenance goes into spec's Builds (journaled: --resume
// refuses a spec that now makes another binary).
func (t *Target) buildServers(ctx context.Context, spec *Spec, say func(string)) error {
	builds := spec.Builds
	if len(builds) == 0 || !t.restarts() { // a managed server or cluster
		return nil
	}
	say(fmt.Sprintf("building %d --build spec(s)%s before the first measurement (a cached spec at once, a build from source in minutes)", len(builds), onHost(t.host.Info())))
	start := time.Now()
	t.built = map[string]buildspec.Provenance{}
	for i := range builds {
		b := &builds[i]
		prov, err := t.host.Build(ctx, serverhost.BuildArgs{Spec: b.Spec, Workload: spec.Workload})
		switch {
		case errors.As(err, new(redisbuild.SpecError)):
			return &Error{Fault: Usage, Err: fmt.Errorf("--build %s: %w", b.Name, err)}
		case err != nil:
			return &Error{Fault: Failure, Err: fmt.Errorf("--build %s: %w", b.Name, err)}
		case b.Built != nil && b.Built.Key != prov.Key:
			return &Error{Fault: Usage, Err: fmt.Errorf("--build %s makes another binary than the session measured (cache key %s, now %s: its source or compiler changed); start a new session", b.Name, b.Built.Key, prov.Key)}
		}
		b.Built, t.built[b.Name] = &prov, prov
		say(fmt.Sprintf("build %s: %s", b.Name, buildLine(prov)))
	}
	t.buildTime = time.Since(start)
	return nil
}

// buildLine is one line of a build's provenance: cached or built, the
// binary, the compiler, the make variables and the source's hash.
func buildLine(p buildspec.Provenance) string {
	return strings.Join(p.Lines()[:min(5, len(p.Lines()))], "; ")
}

// startBuild points a at the binary built as name.
func (t *Target) startBuild(a *serverhost.RedisStartArgs, name string) error {
	p, ok := t.built[name]
	if !ok {
		return fmt.Errorf("no build %q in this session (--build %s=SPEC)", name, name)
	}
	a.Binary = p.Binary
	return nil
}

// cannotBuild: a build this session did not make, or one that made the
// binary of an earlier name (the same spec twice: a comparison of a
// server with itself).
func (t *Target) cannotBuild(name string) string {
	p, ok := t.built[name]
	if !ok {
		return fmt.Sprintf("no build %q in this session", name)
	}
	for other, q := range t.built {
		if other < name && q.Binary == p.Binary {
			return fmt.Sprintf("the same binary as build %s (%s)", other, p.Binary)
		}
	}
	return ""
}

// buildNotes are plan.yaml's notes on the builds the final config runs:
// the binary to start, with its provenance (a plan cannot start it).
func buildNotes(final autotune.Config, builds []Build) []string {
	var notes []string
	for _, s := range final {
		i := slices.IndexFunc(builds, func(b Build) bool { return s.Knob == "server.build" && b.Name == s.Value })
		if i < 0 || builds[i].Built == nil {
			continue
		}
		p := builds[i].Built
		notes = append(notes, fmt.Sprintf("server.build = %s: start %s on the server host (%s); %s", s.Value, p.Binary, builds[i].Spec, strings.Join(p.Lines()[1:], "; ")))
	}
	return notes
}
