package lab

import (
	"context"
	"fmt"
	"slices"

	"redline/internal/labdata"
	"redline/internal/redisbuild"
)

// Builder builds one spec on the host the server runs on (redline build
// here, the server host's build for an ssh target; internal/cli chooses),
// training a PGO build with workload unless the spec names another.
type Builder func(ctx context.Context, spec labdata.BuildSpec, workload string) (labdata.BuildProvenance, error)

// BuildServers builds the server of the scenario and of every variant
// that has server: {build: ...} (redline build, cached), and points their
// Binary at the result, with its provenance in Built. A PGO build trains
// with the scenario's first workload unless its spec names another. It
// runs before Execute: a build takes minutes, the lab's rounds do not
// wait for it. Unless trusted (--trust-scenario), the scenario is held to
// the session's rules first, as Execute holds it: a source tree's
// Makefile must not run before the scenario is refused.
func BuildServers(ctx context.Context, s *labdata.Scenario, build Builder, trusted bool) error {
	if !trusted && hasBuild(s) {
		if err := checkUntrusted(*s); err != nil {
			return redisbuild.SpecError{Err: err}
		}
	}
	var workload string
	if len(s.Workloads) > 0 {
		workload = s.Workloads[0].Bench
	}
	for _, sp := range serverSpecs(s) {
		if sp.spec.Build == nil || sp.spec.Built != nil {
			continue
		}
		prov, err := build(ctx, *sp.spec.Build, workload)
		if err != nil {
			return fmt.Errorf("%s: %w", sp.path, err)
		}
		sp.spec.Binary, sp.spec.Built = prov.Binary, &prov
	}
	return nil
}

func hasBuild(s *labdata.Scenario) bool {
	for _, sp := range serverSpecs(s) {
		if sp.spec.Build != nil && sp.spec.Built == nil {
			return true
		}
	}
	return false
}

type serverAt struct {
	path string
	spec *labdata.ServerSpec
}

// serverSpecs are the scenario's server and its variants', with their
// paths in the scenario file.
func serverSpecs(s *labdata.Scenario) []serverAt {
	out := []serverAt{{"server", &s.Server}}
	for i := range s.Variants {
		if v := s.Variants[i].Server; v != nil {
			out = append(out, serverAt{fmt.Sprintf("variants[%d].server", i), v})
		}
	}
	return out
}

// validateBuilds checks every server: {build: ...}: a local target, no
// binary beside it, flags that are compiler flags.
func validateBuilds(s *labdata.Scenario, bad func(path, format string, args ...any)) {
	for _, sp := range serverSpecs(s) {
		b := sp.spec.Build
		if b == nil {
			continue
		}
		switch {
		case !slices.Contains([]string{labdata.KindManaged, labdata.KindNetns, labdata.KindManagedCluster, labdata.KindSSH}, s.Target.Kind):
			bad(sp.path+".build", "needs a target whose server redline starts (managed, netns, managed-cluster, or ssh: built on the server host)")
		case s.Target.Kind == labdata.KindSSH && s.Target.Port != 0:
			bad(sp.path+".build", "the target is an existing server (port %d); a build needs a server the lab starts", s.Target.Port)
		case sp.spec.Binary != "":
			bad(sp.path+".build", "give binary or build, not both")
		}
		if err := redisbuild.Validate(*b); err != nil {
			bad(sp.path+".build", "%v", err)
		}
	}
}

// checkBuilt refuses a scenario whose builds BuildServers has not made.
func checkBuilt(s labdata.Scenario) error {
	for _, sp := range serverSpecs(&s) {
		if sp.spec.Build != nil && sp.spec.Built == nil {
			return fmt.Errorf("%s.build: not built (lab.BuildServers first)", sp.path)
		}
	}
	return nil
}
