package lab

import (
	"fmt"
	"sort"
	"strings"

	"redline/internal/labdata"
	"redline/internal/secret"
)

// mergeServer applies a variant's server overrides to the scenario's.
func mergeServer(base labdata.ServerSpec, v *labdata.ServerSpec) labdata.ServerSpec {
	out := base
	out.Config = append([]string(nil), base.Config...)
	if v == nil {
		return out
	}
	if v.Binary != "" || v.Build != nil { // a build's binary is filled in when it is built
		out.Binary, out.Build, out.Built = v.Binary, v.Build, v.Built
	}
	if v.Allocator != "" {
		out.Allocator = v.Allocator
	}
	out.Config = append(out.Config, v.Config...)
	if len(v.Env) > 0 {
		out.Env = map[string]string{}
		for k, val := range base.Env {
			out.Env[k] = val
		}
		for k, val := range v.Env {
			out.Env[k] = val
		}
	}
	if v.CPUs != "" {
		out.CPUs = v.CPUs
	}
	if v.NUMANode != nil {
		out.NUMANode = v.NUMANode
	}
	return out
}

// serverDiff lists a variant's server overrides for the report.
func serverDiff(v labdata.VariantSpec) []string {
	var d []string
	if v.Server != nil {
		if v.Server.Build != nil {
			d = append(d, "built "+v.Server.Build.String())
		} else if v.Server.Binary != "" {
			d = append(d, "binary "+v.Server.Binary)
		}
		if v.Server.Allocator != "" {
			d = append(d, "allocator "+v.Server.Allocator)
		}
		for _, c := range v.Server.Config {
			d = append(d, "config "+secret.RedactLine(c)) // saved and printed: no requirepass value
		}
		keys := make([]string, 0, len(v.Server.Env))
		for k := range v.Server.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			d = append(d, "env "+k+"="+v.Server.Env[k])
		}
		if v.Server.CPUs != "" {
			d = append(d, "server CPUs "+v.Server.CPUs)
		}
		if v.Server.NUMANode != nil {
			d = append(d, fmt.Sprintf("server NUMA node %d", *v.Server.NUMANode))
		}
	}
	if v.Client != nil && v.Client.CPUs != "" {
		d = append(d, "client CPUs "+v.Client.CPUs)
	}
	return d
}

func describe(v labdata.VariantSpec) string {
	var parts []string
	if v.Baseline {
		parts = append(parts, "baseline: the host and server as found")
	}
	if t := v.Tune; t != nil {
		if len(t.Profiles) > 0 {
			parts = append(parts, "tune profiles "+strings.Join(t.Profiles, ", "))
		}
		if t.Plan != "" {
			parts = append(parts, "plan "+t.Plan)
		}
		if t.Doctor {
			parts = append(parts, "the doctor's safe fixes")
		}
	}
	if v.Steer != nil {
		parts = append(parts, describeSteer(v.Steer))
	}
	if d := serverDiff(v); len(d) > 0 {
		parts = append(parts, strings.Join(d, "; "))
	}
	return strings.Join(parts, "; ")
}
