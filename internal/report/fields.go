package report

import (
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"redline/internal/benchdata"
	"redline/internal/labdata"
	"redline/internal/secret"
)

// item is one run while a merge labels it: where it came from and what it
// measured.
type item struct {
	src *Source
	run *labdata.Run // nil for a bench document
	sum *benchdata.Summary
	s   *Sample
}

// field reads one label from a run; "" means the run does not record it.
type field struct {
	doc  string
	read func(*item) string
}

// Fields lists the keys --by accepts besides config.NAME, with what each
// reads, for help and error messages.
func Fields() []string {
	keys := make([]string, 0, len(fields)+1)
	for k, f := range fields {
		keys = append(keys, k+"\t"+f.doc)
	}
	slices.Sort(keys)
	return append(keys, "config.NAME\tthe server's CONFIG value NAME as the run recorded it (config.io-threads)")
}

func fieldNames() string {
	keys := make([]string, 0, len(fields)+1)
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(append(keys, "config.NAME"), ", ")
}

// lookupField finds a --by key in the table, or config.NAME.
func lookupField(key string) (field, bool) {
	if f, ok := fields[key]; ok {
		return f, true
	}
	if name, ok := strings.CutPrefix(key, "config."); ok && name != "" {
		return field{read: sumField(func(s *benchdata.Summary) string { return secret.ConfigValue(name, s.Server.Config[name]) })}, true
	}
	return field{}, false
}

// fields is the --by table. Bench documents do not record the server's
// host, so host.hostname, host.kernel and host.cpus fall back to the
// client's (the same machine on loopback).
var fields = map[string]field{
	"file":                   {"the file's name without directory and .json", func(it *item) string { return fileStem(it.src.Path) }},
	"variant":                {"the lab variant (none for bench documents)", func(it *item) string { return it.s.Variant }},
	"workload":               {"the lab workload, or the bench test's title", func(it *item) string { return it.s.Workload }},
	"scenario":               {"the lab scenario's name", labField(func(r *labdata.Result) string { return r.Scenario.Name })},
	"host.hostname":          {"the server host's name (bench: the client's)", hostField(func(h labdata.HostFacts) string { return h.Hostname }, func(c benchdata.ClientInfo) string { return c.Hostname })},
	"host.kernel":            {"the server host's kernel release (bench: the client's)", hostField(func(h labdata.HostFacts) string { return h.Kernel }, func(c benchdata.ClientInfo) string { return c.Kernel })},
	"host.cpus":              {"the server host's CPU count (bench: the client's)", hostField(func(h labdata.HostFacts) string { return itoa(h.CPUs) }, func(c benchdata.ClientInfo) string { return itoa(c.CPUs) })},
	"host.arch":              {"the server host's architecture (lab only)", labField(func(r *labdata.Result) string { return r.ServerFacts().Arch })},
	"host.cpu_model":         {"the server host's CPU model (lab only)", labField(func(r *labdata.Result) string { return r.ServerFacts().CPUModel })},
	"host.virtualization":    {"the server host's virtualization (lab only)", labField(func(r *labdata.Result) string { return r.ServerFacts().Virtual })},
	"target.kind":            {"managed, netns or address (lab only)", labField(func(r *labdata.Result) string { return r.Target.Kind })},
	"target.topology":        {"how the load reached the server (lab only)", labField(func(r *labdata.Result) string { return r.Target.Topology })},
	"target.server_version":  {"the server version the lab found", serverVersion},
	"server.version":         {"the server version the run recorded", sumField(func(s *benchdata.Summary) string { return s.Server.Version })},
	"server.allocator":       {"the server's allocator (INFO mem_allocator)", sumField(func(s *benchdata.Summary) string { return s.Server.Allocator })},
	"server.io_threads":      {"the server's io-threads", sumField(func(s *benchdata.Summary) string { return s.Server.IOThreads })},
	"server.executable":      {"the server's executable", sumField(func(s *benchdata.Summary) string { return s.Server.Executable })},
	"client.hostname":        {"the load generator's host name", sumField(func(s *benchdata.Summary) string { return s.Client.Hostname })},
	"client.kernel":          {"the load generator's kernel release", sumField(func(s *benchdata.Summary) string { return s.Client.Kernel })},
	"client.redline":         {"the redline version that measured", sumField(func(s *benchdata.Summary) string { return s.Client.Redline })},
	"bench.target":           {"the address the load went to", sumField(func(s *benchdata.Summary) string { return s.Config.Target })},
	"bench.clients":          {"-c", sumField(func(s *benchdata.Summary) string { return itoa(s.Config.Clients) })},
	"bench.pipeline":         {"-P", sumField(func(s *benchdata.Summary) string { return itoa(s.Config.Pipeline) })},
	"bench.threads":          {"--threads", sumField(func(s *benchdata.Summary) string { return itoa(s.Config.Threads) })},
	"bench.payload_bytes":    {"-d, the value size in bytes", sumField(func(s *benchdata.Summary) string { return itoa(s.Config.PayloadBytes) })},
	"bench.value_sizes":      {"the value size distribution", sumField(func(s *benchdata.Summary) string { return s.Config.ValueSizes })},
	"bench.keyspace":         {"-r", sumField(func(s *benchdata.Summary) string { return strconv.FormatUint(s.Config.KeySpace, 10) })},
	"bench.key_distribution": {"--key-dist", sumField(func(s *benchdata.Summary) string { return s.Config.KeyDist })},
	"bench.rate":             {"--rate", sumField(func(s *benchdata.Summary) string { return strconv.FormatFloat(s.Config.Rate, 'f', -1, 64) })},
	"bench.tls":              {"--tls", sumField(func(s *benchdata.Summary) string { return strconv.FormatBool(s.Config.TLS) })},
}

func itoa(n int) string { return strconv.Itoa(n) }

func sumField(f func(*benchdata.Summary) string) func(*item) string {
	return func(it *item) string {
		if it.sum == nil {
			return ""
		}
		return f(it.sum)
	}
}

func labField(f func(*labdata.Result) string) func(*item) string {
	return func(it *item) string {
		if it.src.Result == nil {
			return ""
		}
		return f(it.src.Result)
	}
}

func hostField(fromLab func(labdata.HostFacts) string, fromClient func(benchdata.ClientInfo) string) func(*item) string {
	return func(it *item) string {
		if it.src.Result != nil {
			return fromLab(it.src.Result.ServerFacts())
		}
		if it.sum == nil {
			return ""
		}
		return fromClient(it.sum.Client)
	}
}

func serverVersion(it *item) string {
	if it.src.Result != nil && it.src.Result.Target.ServerVersion != "" {
		return it.src.Result.Target.ServerVersion
	}
	if it.sum == nil {
		return ""
	}
	return it.sum.Server.Version
}

// benchFlagOf maps a bench.* field to the flag that names it in a row, so
// the dimension a merge compares is not repeated in the row names.
var benchFlagOf = map[string]string{
	"bench.clients": "-c", "bench.pipeline": "-P", "bench.threads": "--threads",
	"bench.payload_bytes": "-d", "bench.value_sizes": "-d", "bench.keyspace": "-r",
	"bench.rate": "--rate", "bench.key_distribution": "--key-dist",
}

// fileStem is the file's name without directory and extension.
func fileStem(path string) string {
	base := filepath.Base(path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// keyFromName finds NAME-VALUE (or NAME=VALUE, NAME_VALUE, NAME:VALUE) in
// a path such as results/kernel-5.4.json; VALUE ends at _, comma, +, / or
// the extension. The match nearest the file name wins.
func keyFromName(path, name string) (string, bool) {
	p := strings.TrimSuffix(path, filepath.Ext(path))
	re := regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9])` + regexp.QuoteMeta(name) + `[-=_:]([^_,+/]+)`)
	m := re.FindAllStringSubmatch(p, -1)
	if len(m) == 0 {
		return "", false
	}
	return m[len(m)-1][1], true
}
