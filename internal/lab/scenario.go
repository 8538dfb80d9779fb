package lab

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"redline/internal/bench"
	"redline/internal/bench/cmdline"
	"redline/internal/labdata"
	"redline/internal/redisserver"
	"redline/internal/shellwords"
	"redline/internal/textsafe"
	"redline/internal/yamlerr"
)

// LoadScenario reads and validates a scenario file.
func LoadScenario(path string) (labdata.Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return labdata.Scenario{}, err
	}
	s, err := ParseScenario(b)
	if err != nil {
		return labdata.Scenario{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseScenario decodes a scenario strictly: an unknown field, a wrong type
// or a bad value is an error that names its line.
func ParseScenario(b []byte) (labdata.Scenario, error) {
	var s labdata.Scenario
	line, err := yamlerr.Strict(b, &s, "scenario")
	if err != nil {
		return s, err
	}
	fillDefaults(&s)
	if err := validate(&s, line); err != nil {
		return s, err
	}
	return s, nil
}

// Validate checks a scenario built or changed in code (the CLI's flag
// overrides) as ParseScenario checks a file, without line numbers.
func Validate(s *labdata.Scenario) error {
	return validate(s, func(string) string { return "" })
}

func fillDefaults(s *labdata.Scenario) {
	if s.Target.Kind == "" {
		s.Target.Kind = labdata.KindManaged
	}
	if s.Target.Kind == labdata.KindManagedCluster && s.Target.Primaries == 0 {
		s.Target.Primaries = 3
	}
	if len(s.Variants) == 0 {
		s.Variants = []labdata.VariantSpec{{Name: "baseline", Baseline: true}}
	}
	hasBase := false
	for _, v := range s.Variants {
		hasBase = hasBase || v.Baseline
	}
	if !hasBase {
		s.Variants[0].Baseline = true
	}
}

// validate checks values; lines maps a dotted path to its line number.
func validate(s *labdata.Scenario, line func(path string) string) error {
	var errs []string
	bad := func(path, format string, args ...any) {
		errs = append(errs, line(path)+path+": "+fmt.Sprintf(format, args...))
	}
	if s.Target.Kind != labdata.KindManagedCluster && (s.Target.Primaries != 0 || s.Target.Replicas != 0) {
		bad("target.primaries", "only for kind: managed-cluster")
	}
	if s.HostWide != "" && s.HostWide != "allow" {
		bad("host_wide", "%q: the one value is allow", s.HostWide)
	}
	if s.Target.Cluster && s.Target.Kind != labdata.KindAddress {
		bad("target.cluster", "only for kind: address (a managed-cluster is one already)")
	}
	switch s.Target.Kind {
	case labdata.KindManaged, labdata.KindNetns, labdata.KindManagedCluster:
		if s.Target.Address != "" {
			bad("target.address", "only for kind: address")
		}
		if s.Target.Primaries < 0 || s.Target.Replicas < 0 || s.Target.Primaries > 64 || s.Target.Replicas > 8 {
			bad("target.primaries", "primaries 1..64 and replicas 0..8 per primary, got %d and %d", s.Target.Primaries, s.Target.Replicas)
		}
	case labdata.KindAddress:
		if s.Server.Allocator != "" || s.Server.Binary != "" || len(s.Server.Config) > 0 {
			bad("server", "server settings need a managed or netns target")
		}
		if s.Target.Address == "" {
			bad("target.address", "required for kind: address (host:port)")
		}
	case labdata.KindSSH:
		validateSSH(s, bad)
	default:
		bad("target.kind", "%q is not managed, managed-cluster, netns, address or ssh", s.Target.Kind)
	}
	if (len(s.Target.Sysctls) > 0 || len(s.Target.ClientSysctls) > 0) && s.Target.Kind != labdata.KindNetns {
		bad("target.sysctls", "a starting state of sysctls needs kind: netns (namespaces of the lab's own; the host's are changed only by a tuned variant)")
	}
	if s.Target.Kind != labdata.KindSSH {
		t := s.Target
		if t.Host != "" || t.Port != 0 || t.Heartbeat != 0 || t.NoPush || t.Sudo {
			bad("target", "host, port, heartbeat, no_push and sudo are for kind: ssh")
		}
	}
	if s.Target.Queues != 0 && (s.Target.Kind != labdata.KindNetns || s.Target.Queues < 1 || s.Target.Queues > 64) {
		bad("target.queues", "%d: only for kind: netns, 1 to 64", s.Target.Queues)
	}
	if s.Target.Password != "" && s.Target.PasswordFile != "" {
		bad("target.password_file", "give password or password_file, not both")
	}
	validateRuns(s, bad)
	validateBuilds(s, bad)
	validateTool(s, bad)
	if s.Warmup < 0 || s.Warmup > time.Hour {
		bad("warmup", "%s is not in 0..1h", s.Warmup)
	}
	if s.Server.Allocator != "" && s.Target.Kind != labdata.KindSSH { // the server host checks its own
		if _, err := redisserver.AllocatorLib(s.Server.Allocator); err != nil {
			bad("server.allocator", "%v", err)
		}
	}
	if len(s.Workloads) == 0 {
		bad("workloads", "at least one workload is required")
	}
	names := map[string]bool{}
	plainName(s.Name, "name", bad)
	for i, w := range s.Workloads {
		p := fmt.Sprintf("workloads.%d", i)
		if w.Name == "" || names["w:"+w.Name] {
			bad(p+".name", "missing or duplicate name %q", w.Name)
		}
		plainName(w.Name, p+".name", bad)
		names["w:"+w.Name] = true
		if wl, err := cmdline.ParseWorkload(w.Bench); err != nil {
			bad(p+".bench", "%v", err)
		} else if n := s.Client.LoadWorkers(); n > 0 {
			if err := bench.CheckWorkers(n, wl.Options); err != nil {
				bad(p+".bench", "with client.workers: %v", err)
			}
		}
		validateSweep(w, p, bad)
	}
	validateWorkers(s, bad)
	bases := 0
	for i, v := range s.Variants {
		p := fmt.Sprintf("variants.%d", i)
		if v.Client != nil && (v.Client.Workers != 0 || len(v.Client.WorkerHosts) > 0) {
			bad(p+".client.workers", "workers are the scenario's (client.workers, client.worker_hosts): every variant is measured with the same load")
		}
		if v.Name == "" || names["v:"+v.Name] {
			bad(p+".name", "missing or duplicate name %q", v.Name)
		}
		plainName(v.Name, p+".name", bad)
		names["v:"+v.Name] = true
		if v.Baseline {
			bases++
		}
		if v.Server != nil && v.Server.Allocator != "" && s.Target.Kind != labdata.KindSSH {
			if _, err := redisserver.AllocatorLib(v.Server.Allocator); err != nil {
				bad(p+".server.allocator", "%v", err)
			}
		}
		if v.Server != nil && existingServer(s.Target) {
			bad(p+".server", "server variants need a managed or netns target (redline cannot restart a server it did not start)")
		}
		if v.Baseline && v.Tune != nil {
			bad(p+".tune", "the baseline variant cannot tune")
		}
		if v.Server != nil && s.Target.Kind == labdata.KindSSH && len(v.Server.Env) > 0 {
			bad(p+".server.env", "a server host's session sets no environment (allocator: preloads one)")
		}
		validateSteer(v, s.Target.Kind, p, bad)
		if v.Tune != nil && v.Tune.Restart && existingServer(s.Target) {
			bad(p+".tune.restart", "only a managed or netns server can be restarted")
		}
	}
	if bases != 1 {
		bad("variants", "exactly one variant must be the baseline, found %d", bases)
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// validateSweep checks a workload's sweep: one known parameter, values
// its line accepts.
func validateSweep(w labdata.WorkloadSpec, path string, bad func(path, format string, args ...any)) {
	if len(w.Sweep) == 0 {
		return
	}
	if len(w.Sweep) > 1 {
		bad(path+".sweep", "sweeps one parameter, found %d", len(w.Sweep))
		return
	}
	for param, values := range w.Sweep {
		if labdata.SweepParams[param] == "" {
			bad(path+".sweep", "%q is not d, c, P or threads", param)
			return
		}
		if len(values) == 0 {
			bad(path+".sweep."+param, "no values")
		}
		for _, v := range values {
			pt := &labdata.SweepPoint{Param: param, Value: v}
			line, _ := sweepLine(w, pt)
			if strings.ContainsAny(v, " \t'\"") {
				bad(path+".sweep."+param, "%q is not a single value", v)
			} else if _, err := cmdline.ParseWorkload(line); err != nil {
				bad(path+".sweep."+param, "%s=%s: %v", param, v, err)
			}
		}
	}
}

// validateRuns checks the settings of how many runs to take.
func validateRuns(s *labdata.Scenario, bad func(path, format string, args ...any)) {
	for _, f := range []struct {
		path string
		v    int
	}{{"repetitions", s.Repetitions}, {"min_runs", s.MinRuns}, {"max_runs", s.MaxRuns}} {
		if f.v < 0 || f.v > 1000 {
			bad(f.path, "%d is not in 1..1000", f.v)
		}
	}
	if s.MaxRuns > 0 && s.MinRuns > s.MaxRuns {
		bad("min_runs", "%d is more than max_runs %d", s.MinRuns, s.MaxRuns)
	}
	if s.Repetitions > 0 && (s.MinRuns > 0 || s.MaxRuns > 0) {
		bad("repetitions", "fixes the runs: drop it, or min_runs and max_runs")
	}
	if s.Precision < 0 || s.Precision >= 1 {
		bad("precision", "%g is not between 0 and 100%%", float64(s.Precision))
	}
	if s.Alpha < 0 || s.Alpha > 0.5 {
		bad("alpha", "%g is not between 0 and 50%%", float64(s.Alpha))
	}
	if s.Budget < 0 {
		bad("budget", "%s is negative", s.Budget)
	}
}

// lineFinder returns "line N: " for a dotted path (list indexes as
// numbers) in the YAML document, or "" when the path is not in it.
// existingServer reports whether the target is someone's running server,
// which the lab never restarts.
func existingServer(t labdata.TargetSpec) bool {
	return t.Kind == labdata.KindAddress || (t.Kind == labdata.KindSSH && t.Port != 0)
}

// validateWorkers checks the scenario's load workers: local processes,
// or ssh hosts that can reach the server.
func validateWorkers(s *labdata.Scenario, bad func(path, format string, args ...any)) {
	c := s.Client
	if c.Workers < 0 || c.Workers > bench.MaxWorkers {
		bad("client.workers", "%d is not in 0..%d", c.Workers, bench.MaxWorkers)
	}
	if len(c.WorkerHosts) > bench.MaxWorkers {
		bad("client.worker_hosts", "%d hosts: at most %d", len(c.WorkerHosts), bench.MaxWorkers)
	}
	if len(c.WorkerHosts) == 0 {
		return
	}
	if c.Workers != 0 {
		bad("client.workers", "give workers (local processes) or worker_hosts, not both")
	}
	if c.CPUs != "" {
		bad("client.cpus", "pins this host's load generator; with worker_hosts the load comes from those hosts (drop cpus)")
	}
	for i, h := range c.WorkerHosts {
		if !shellwords.ValidSSHDestination(h) {
			bad(fmt.Sprintf("client.worker_hosts.%d", i), "%q: want an ssh destination, [user@]host or a Host of your ssh config", h)
		}
	}
	switch t := s.Target; {
	case t.Kind == labdata.KindAddress && loopback(t.Address):
		bad("client.worker_hosts", "target.address %s is this host's loopback, which the worker hosts cannot reach", t.Address)
	case t.Kind != labdata.KindSSH && t.Kind != labdata.KindAddress:
		bad("client.worker_hosts", "the load from other hosts needs a server they reach: a target of kind ssh or address, not %s", t.Kind)
	}
}

func loopback(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	return labdata.LoopbackHost(h)
}

// validateSSH checks a target of kind ssh.
func validateSSH(s *labdata.Scenario, bad func(path, format string, args ...any)) {
	t := s.Target
	if !shellwords.ValidSSHDestination(t.Host) {
		bad("target.host", "%q: want the ssh destination, [user@]host or a Host of your ssh config", t.Host)
	}
	if t.Address != "" && net.ParseIP(t.Address) == nil {
		bad("target.address", "%q: for kind ssh, an IP address of the server host the load goes to", t.Address)
	}
	if t.Port < 0 || t.Port > 65535 {
		bad("target.port", "%d is not a port", t.Port)
	}
	if t.Heartbeat != 0 && (t.Heartbeat < time.Second || t.Heartbeat > 10*time.Minute) {
		bad("target.heartbeat", "%s is not in 1s..10m", t.Heartbeat)
	}
	if t.Port != 0 && (s.Server.Allocator != "" || s.Server.Binary != "" || len(s.Server.Config) > 0 || s.Server.CPUs != "" || s.Server.NUMANode != nil) {
		bad("server", "server settings need a server the lab starts (drop target.port)")
	}
	if len(s.Server.Env) > 0 {
		bad("server.env", "a server host's session sets no environment (allocator: preloads one)")
	}
}

// plainName refuses a name with terminal controls or line breaks: names
// are printed on the terminal, in runs.csv and in the reports, and a
// scenario may be someone else's (an ESC sequence would retitle the
// terminal or hide a line).
func plainName(name, field string, bad func(field, format string, args ...any)) {
	if textsafe.Unsafe(name) {
		bad(field, "%q holds a control character or a line break; use plain text", name)
	}
}
