package lab

import (
	"slices"

	"redline/internal/labdata"
	"redline/internal/secret"
)

// redactScenario is the scenario as result.json keeps it: workload lines and
// server config lines without their passwords (the target's is never saved).
func redactScenario(s labdata.Scenario) labdata.Scenario {
	s.Workloads = slices.Clone(s.Workloads)
	for i := range s.Workloads {
		s.Workloads[i].Bench = secret.RedactLine(s.Workloads[i].Bench)
	}
	s.Server.Config = redactLines(s.Server.Config)
	s.Variants = slices.Clone(s.Variants)
	for i, v := range s.Variants {
		if v.Server != nil {
			srv := *v.Server
			srv.Config = redactLines(srv.Config)
			s.Variants[i].Server = &srv
		}
	}
	return s
}

func redactLines(lines []string) []string {
	out := slices.Clone(lines)
	for i := range out {
		out[i] = secret.RedactLine(out[i])
	}
	return out
}
