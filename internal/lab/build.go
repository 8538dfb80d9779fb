package lab

import (
	"context"
	"fmt"

	"redline/internal/labdata"
	"redline/internal/redisbuild"
)

// BuildServers builds the server of the scenario and of every variant
// that has server: {build: ...} (redline build, cached), and points their
// Binary at the result, with its provenance in Built. A PGO build trains
// with the scenario's first workload unless its spec names another. It
// runs before Execute: a build takes minutes, the lab's rounds do not
// wait for it.
func BuildServers(ctx context.Context, s *labdata.Scenario, o redisbuild.Options) error {
	if o.Workload == "" && len(s.Workloads) > 0 {
		o.Workload = s.Workloads[0].Bench
	}
	for _, sp := range serverSpecs(s) {
		if sp.spec.Build == nil || sp.spec.Built != nil {
			continue
		}
		prov, err := redisbuild.Build(ctx, *sp.spec.Build, o)
		if err != nil {
			return fmt.Errorf("%s: %w", sp.path, err)
		}
		sp.spec.Binary, sp.spec.Built = prov.Binary, &prov
	}
	return nil
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
		case s.Target.Kind != "managed" && s.Target.Kind != "netns" && s.Target.Kind != "managed-cluster":
			bad(sp.path+".build", "needs a managed or netns target (building on a server host over ssh is not supported yet)")
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
