package lab

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"redline/internal/benchdata"
	"redline/internal/labdata"
	"redline/internal/loadtool"
)

// runTool measures an item with the scenario's client.tool instead of
// redline's bench: the workload's line is the tool's, aimed at the target.
func runTool(ctx context.Context, tool string, it item) (*benchdata.Summary, *labdata.LoadTool, error) {
	res, err := loadtool.Run(ctx, loadtool.Request{Tool: tool, Args: it.line[2:], Test: it.test.Title,
		Addr: it.opts.Addr, Env: it.toolEnv})
	if err != nil {
		return nil, nil, err
	}
	return res.Summary, &labdata.LoadTool{Name: tool, Precision: loadtool.Tools[tool].Precision,
		Argv: res.Argv, Env: it.toolEnv, Preloaded: res.Preloaded}, nil
}

// clientEnv is the load program's environment: the scenario's client.env
// with the variant's on top, as KEY=VALUE in key order.
func clientEnv(base labdata.ClientSpec, v *labdata.ClientSpec) []string {
	m := map[string]string{}
	for k, val := range base.Env {
		m[k] = val
	}
	if v != nil {
		for k, val := range v.Env {
			m[k] = val
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	env := make([]string, 0, len(keys))
	for _, k := range keys {
		env = append(env, k+"="+m[k])
	}
	return env
}

// validateTool checks client.tool and client.env: a known tool, the
// scenario's only (a verdict never compares two tools), an environment
// only with a tool, and workload lines the tool can run.
func validateTool(s *labdata.Scenario, bad func(path, format string, args ...any)) {
	c := s.Client
	switch t := c.Tool; {
	case t == "" || t == "redline":
		s.Client.Tool = ""
	case t == "memtier_benchmark":
		bad("client.tool", "memtier_benchmark: redline reads its output (loadtool.ParseMemtier) but the lab does not run it yet: it is not packaged in Debian 12 and cannot be tested here")
	case loadtool.Tools[t].Name == "":
		bad("client.tool", "%q: redline (the default) or redis-benchmark", t)
	case c.LoadWorkers() > 0:
		bad("client.tool", "client.workers and worker_hosts are redline bench's; not with client.tool")
	}
	hasEnv := len(c.Env) > 0
	for i, v := range s.Variants {
		if v.Client == nil {
			continue
		}
		if v.Client.Tool != "" {
			bad(fmt.Sprintf("variants[%d].client.tool", i), "the scenario's client.tool only: every variant is measured by the same tool, so no verdict mixes tools")
		}
		hasEnv = hasEnv || len(v.Client.Env) > 0
	}
	if hasEnv && s.Client.Tool == "" {
		bad("client.env", "needs client.tool: redis-benchmark (redline's own bench makes raw system calls: a preloaded library never sees its sockets)")
	}
	if s.Client.Tool == "redis-benchmark" {
		for i, w := range s.Workloads {
			if strings.Contains(" "+w.Bench+" ", " --duration") || strings.Contains(w.Bench, "--warmup") {
				bad(fmt.Sprintf("workloads[%d].bench", i), "redis-benchmark has no --duration or --warmup: give -n")
			}
		}
	}
}
