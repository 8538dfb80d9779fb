package report

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"redline/internal/testutil"
	"strings"
	"sync"
	"testing"
	"time"

	"redline/internal/benchdata"
	"redline/internal/change"
	"redline/internal/labdata"
	"redline/internal/stats"
)

// The input fixtures are synthetic but shaped like real runs: lognormal
// latencies with a slow tail recorded into real HDR histograms, run-to-run
// noise of a few percent, interleaved variants. They are generated here and
// committed, so a change of the generator shows up as a diff of inputs.
var fixtureFiles = map[string]func() any{
	"lab.json":         func() any { return labFixture(true) },
	"lab-partial.json": func() any { return labFixture(false) },
	"kernel-3.10.json": func() any { return kernelFixture("3.10.0-1160.el7.x86_64", 1.00, 1) },
	"kernel-4.19.json": func() any { return kernelFixture("4.19.90-2107.6.0.0100.oe1.x86_64", 1.04, 2) },
	"kernel-5.4.json":  func() any { return kernelFixture("5.4.0-150-generic", 0.99, 3) },
	"kernel-6.9.json":  func() any { return kernelFixture("6.9.0-rc7", 0.91, 4) },
	"net-10g.json":     func() any { return valueSizeFixture("10GbE", 5) },
	"net-rdma.json":    func() any { return valueSizeFixture("RDMA", 6) },
}

var writeFixtures sync.Once

// fixture returns the path of an input fixture, regenerating all of them
// first under -update.
func fixture(t *testing.T, name string) string {
	t.Helper()
	if testutil.Updating() {
		writeFixtures.Do(func() {
			for n, gen := range fixtureFiles {
				b, err := json.MarshalIndent(gen(), "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join("testdata", "input", n), append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	return filepath.Join("testdata", "input", name)
}

func mustLoad(t *testing.T, name string) *Source {
	t.Helper()
	src, err := Load(fixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

var epoch = time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC)

// runShape is what one synthetic run looks like.
type runShape struct {
	title    string
	rps      float64
	medianNs float64 // median latency
	sigma    float64 // lognormal spread
	n        int     // latencies recorded
	cfg      benchdata.RunConfig
	argv     []string
	server   benchdata.ServerInfo
	client   benchdata.ClientInfo
	start    time.Time
}

// summary records a run with latencies exp(N(ln median, sigma)) and a
// 0.2% tail eight to twenty times slower.
func (rs runShape) summary(rng *rand.Rand) *benchdata.Summary {
	h := benchdata.NewHistogram(3)
	for i := range rs.n {
		v := rs.medianNs * math.Exp(rng.NormFloat64()*rs.sigma)
		if i%500 == 0 {
			v *= 8 + 12*rng.Float64()
		}
		h.RecordValue(int64(v))
	}
	elapsed := float64(h.TotalCount()) / rs.rps
	return &benchdata.Summary{
		Schema: benchdata.SchemaVersion, Title: rs.title, Command: strings.Fields(rs.title)[0], CommandLine: rs.argv,
		Config: rs.cfg, Start: rs.start, End: rs.start.Add(time.Duration(elapsed * float64(time.Second))),
		ElapsedSeconds: elapsed, Requests: h.TotalCount(), RPS: rs.rps,
		Latency: benchdata.Digest(h.Histogram), Histogram: h, Server: rs.server, Client: rs.client,
	}
}

func noisy(rng *rand.Rand, v, pct float64) float64 { return v * (1 + pct/100*rng.NormFloat64()) }

// labWorkloads and labVariants shape the lab fixture: the tuned variant
// is about 9% faster with a lower p99; io-threads changes nothing on 2
// CPUs beyond noise.
var labWorkloads = []struct {
	name, cmd string
	rps       float64
	medianNs  float64
}{
	{"set", "redline bench -t set -c 50 -n 20000 -r 100000 -d 64 --threads 2", 98000, 240000},
	{"get", "redline bench -t get -c 50 -n 20000 -r 100000 -d 64 --threads 2", 112000, 210000},
}

var labVariants = []struct {
	name           string
	rpsX, latX     float64
	cpuUsPerReq    float64
	serverSettings []string
}{
	{"baseline", 1, 1, 4.6, nil},
	{"tuned", 1.09, 0.9, 4.1, nil},
	{"io-threads-2", 1.0, 1.0, 4.7, []string{"io-threads 2"}},
}

func labFixture(complete bool) *labdata.Result {
	rng := rand.New(rand.NewPCG(42, 7))
	res := labSkeleton()
	seq := 0
	for rep := 1; rep <= 3; rep++ {
		for _, w := range labWorkloads {
			for _, v := range labVariants {
				seq++
				if !complete && seq > 14 {
					break
				}
				res.Runs = append(res.Runs, labRun(rng, seq, rep, w.name, w.cmd, w.rps*v.rpsX, w.medianNs*v.latX, v.name, v.cpuUsPerReq))
			}
		}
	}
	if complete {
		res.Complete, res.Finished = true, epoch.Add(4*time.Minute)
		res.Comparisons = fixtureComparisons(res)
		return res
	}
	last := res.Runs[len(res.Runs)-1].Summary
	last.Interrupted, last.Error = true, "interrupted by signal"
	res.Error = "interrupted (SIGINT) after 14 runs; the host was restored"
	res.Variants[1].RolledBack = false
	return res
}

func labRun(rng *rand.Rand, seq, rep int, workload, cmd string, rps, medianNs float64, variant string, cpu float64) labdata.Run {
	rs := runShape{
		title: strings.ToUpper(workload), rps: noisy(rng, rps, 2.5), medianNs: noisy(rng, medianNs, 2), sigma: 0.35, n: 20000,
		cfg:    benchdata.RunConfig{Target: "127.0.0.1:40123", Clients: 50, Requests: 20000, Pipeline: 1, Threads: 2, KeepAlive: true, KeySpace: 100000, PayloadBytes: 64, Precision: 3, Seed: uint64(seq)},
		argv:   strings.Fields(cmd),
		server: benchdata.ServerInfo{Version: "7.0.15", Mode: "standalone", Allocator: "jemalloc-5.3.0", IOThreads: ioThreadsOf(variant), Executable: "/usr/bin/redis-server"},
		client: benchdata.ClientInfo{Redline: "0.1.0", Go: "go1.26.8", Hostname: "lab1", Kernel: "6.1.0-28-amd64", CPUs: 2},
		start:  epoch.Add(time.Duration(seq) * 5 * time.Second),
	}
	sum := rs.summary(rng)
	c := noisy(rng, cpu, 3)
	return labdata.Run{Seq: seq, Variant: variant, Workload: workload, Rep: rep, Summary: sum,
		ServerCPU: c * float64(sum.Requests) / 1e6, ServerCPUPerRequest: c}
}

func ioThreadsOf(variant string) string {
	if variant == "io-threads-2" {
		return "2"
	}
	return "1"
}

func labSkeleton() *labdata.Result {
	return &labdata.Result{
		Schema: labdata.ResultSchema, Redline: "0.1.0",
		CommandLine:  []string{"redline", "lab", "scenarios/loopback.yaml", "-o", "out/"},
		ScenarioFile: "scenarios/loopback.yaml",
		Scenario:     fixtureScenario(),
		Planned:      fixturePlanned(),
		Started:      epoch,
		Host: labdata.HostFacts{Hostname: "lab1", Kernel: "6.1.0-28-amd64", Arch: "x86_64", CPUModel: "Intel Xeon Processor (Icelake)",
			CPUs: 2, NUMANodes: 1, MemoryMiB: 24039, Virtual: "kvm", NICs: []string{"eth0 virtio_net node -1 queues 1"},
			Notes: []string{"client and server share both CPUs (loopback)"}},
		Target: labdata.TargetInfo{Kind: "managed", Address: "127.0.0.1:40123", ServerVersion: "7.0.15", Binary: "/usr/bin/redis-server", Topology: "loopback"},
		Findings: []labdata.Finding{
			{ID: "somaxconn-low", Severity: "medium", Title: "listen backlog is small", Message: "net.core.somaxconn 128 is below the server's tcp-backlog 511; bursts of connects are dropped",
				Evidence: []string{"/proc/sys/net/core/somaxconn = 128", "CONFIG GET tcp-backlog = 511"}, Fix: []string{"sysctl -w net.core.somaxconn=4096"}},
			{ID: "thp-always", Severity: "high", Title: "transparent huge pages are always on", Message: "fork latency and memory use grow with THP enabled=always",
				Evidence: []string{"/sys/kernel/mm/transparent_hugepage/enabled = [always] madvise never"}, Fix: []string{"echo never > /sys/kernel/mm/transparent_hugepage/enabled"}},
			{ID: "irqbalance-active", Severity: "low", Title: "irqbalance moves the NIC's IRQs", Evidence: []string{"systemctl is-active irqbalance = active"}, Fix: []string{"systemctl stop irqbalance"}},
			{ID: "clocksource", Severity: "info", Title: "clocksource is kvm-clock", Message: "fine for a VM"},
		},
		Variants: []labdata.VariantInfo{
			{Name: "baseline", Baseline: true, Description: "the host as found"},
			{Name: "tuned", Description: "the doctor's safe fixes", RolledBack: true, Plan: []labdata.PlanStep{
				{Change: change.Change{Kind: change.KindSysctl, Target: "net.core.somaxconn", Value: "4096", Why: "backlog below tcp-backlog", Rule: "somaxconn-low"}, Old: "128", Status: "restored"},
				{Change: change.Change{Kind: change.KindFile, Target: "/sys/kernel/mm/transparent_hugepage/enabled", Value: "never", Why: "THP stalls forks", Rule: "thp-always"}, Old: "always", Status: "restored"},
				{Change: change.Change{Kind: change.KindService, Target: "irqbalance", Value: "inactive", Why: "keeps IRQs where placed", Rule: "irqbalance-active"}, Status: "refused", Note: "not safe on a shared host (--safe)"},
			}},
			{Name: "io-threads-2", Description: "Redis with io-threads 2", Server: []string{"io-threads 2"}, Notes: []string{"server restarted for this variant"}},
		},
	}
}

// fixturePlanned is the lab's plan for fixtureScenario: 3 repetitions of
// every workload under every variant.
func fixturePlanned() *labdata.PlannedRuns {
	p := &labdata.PlannedRuns{}
	for _, v := range labVariants {
		for _, w := range labWorkloads {
			p.Groups = append(p.Groups, labdata.PlannedGroup{Variant: v.name, Workload: w.name, Runs: 3})
			p.Total += 3
		}
	}
	return p
}

func fixtureScenario() labdata.Scenario {
	sc := labdata.Scenario{Name: "loopback", Description: "Managed redis-server on loopback: baseline, the doctor's safe fixes, io-threads.",
		Target: labdata.TargetSpec{Kind: "managed"}, Server: labdata.ServerSpec{Config: []string{"save ''", "appendonly no"}},
		Repetitions: 3, Warmup: 2 * time.Second}
	for _, w := range labWorkloads {
		sc.Workloads = append(sc.Workloads, labdata.WorkloadSpec{Name: w.name, Bench: w.cmd})
	}
	for _, v := range labVariants {
		sc.Variants = append(sc.Variants, labdata.VariantSpec{Name: v.name, Baseline: v.name == "baseline"})
	}
	return sc
}

// fixtureComparisons plays the lab: each variant against the baseline.
func fixtureComparisons(res *labdata.Result) []labdata.Comparison {
	var cs []labdata.Comparison
	values := func(workload, variant string, f func(*benchdata.Summary) float64) []float64 {
		var xs []float64
		for _, r := range res.Runs {
			if r.Workload == workload && r.Variant == variant {
				xs = append(xs, f(r.Summary))
			}
		}
		return xs
	}
	for _, w := range labWorkloads {
		for _, v := range labVariants[1:] {
			for _, m := range []struct {
				name   string
				higher bool
				f      func(*benchdata.Summary) float64
			}{{"rps", true, func(s *benchdata.Summary) float64 { return s.RPS }}, {"p99_ms", false, func(s *benchdata.Summary) float64 { return s.Latency.P99 }}} {
				x, ref := values(w.name, v.name, m.f), values(w.name, "baseline", m.f)
				vs := compare(x, ref, m.higher, stats.LabWords, stats.Design{Alpha: 0.05, Comparisons: 1, Looks: 1})
				cs = append(cs, labdata.Comparison{Workload: w.name, Variant: v.name, Baseline: "baseline", Metric: m.name, HigherIsBetter: m.higher,
					N: len(x), BaselineN: len(ref), Median: median(x), BaselineMedian: median(ref), Min: spreadOf(x).Min, Max: spreadOf(x).Max,
					Ratio: vs.Ratio, CILow: vs.CILow, CIHigh: vs.CIHigh, HasCI: vs.HasCI, Verdict: vs.Verdict})
			}
		}
	}
	return cs
}

// kernelFixture is one host's `redline bench -t set,get -l` run stopped
// after three loops, as in the write-up comparing kernels.
func kernelFixture(kernel string, speed float64, seed uint64) *benchdata.Document {
	rng := rand.New(rand.NewPCG(seed, 11))
	argv := strings.Fields("redline bench -t set,get -c 32 -n 500000 -r 500000 --threads 6 -l --json kernel.json")
	doc := &benchdata.Document{Schema: benchdata.DocumentSchema, Redline: "0.1.0", CommandLine: argv, Started: epoch}
	for i := range 6 {
		title, rps := []string{"SET", "GET"}[i%2], []float64{104000, 108000}[i%2]
		rs := runShape{title: title, rps: noisy(rng, rps*speed, 2), medianNs: noisy(rng, 280000/speed, 2), sigma: 0.3, n: 5000,
			cfg:    benchdata.RunConfig{Target: "192.168.100.2:6379", Clients: 32, Requests: 500000, Pipeline: 1, Threads: 6, KeepAlive: true, KeySpace: 500000, PayloadBytes: 3, Precision: 3},
			argv:   argv,
			server: benchdata.ServerInfo{Version: "6.2.7", Mode: "standalone", Allocator: "jemalloc-5.1.0"},
			client: benchdata.ClientInfo{Redline: "0.1.0", Go: "go1.26.8", Hostname: "kunpeng-client", Kernel: kernel, CPUs: 128},
			start:  epoch.Add(time.Duration(i) * 5 * time.Second)}
		doc.Results = append(doc.Results, rs.summary(rng))
	}
	return doc
}

// valueSizeFixture is SET and GET at four value sizes, three loops each, on
// one network path, as in the write-up comparing 10GbE with RDMA.
func valueSizeFixture(path string, seed uint64) *benchdata.Document {
	rng := rand.New(rand.NewPCG(seed, 13))
	doc := &benchdata.Document{Schema: benchdata.DocumentSchema, Redline: "0.1.0", Started: epoch,
		CommandLine: []string{"sh", "-c", "for d in 3 300 3000 10000; do redline bench -t set,get -d $d -n 100000 -c 50 --json " + path + "-$d.json; done"}}
	bw := map[string]float64{"10GbE": 1.25e9, "RDMA": 3.1e9}[path]
	for _, d := range []int{3, 300, 3000, 10000} {
		for i := range 6 {
			title := []string{"SET", "GET"}[i%2]
			rps := 1 / (1/125000.0 + float64(d)/bw)
			argv := strings.Fields(fmt.Sprintf("redline bench -t set,get -d %d -n 100000 -c 50", d))
			rs := runShape{title: title, rps: noisy(rng, rps, 2), medianNs: noisy(rng, 50/rps*1e9, 2), sigma: 0.3, n: 3000,
				cfg:    benchdata.RunConfig{Target: "192.168.2.101:6379", Clients: 50, Requests: 100000, Pipeline: 1, Threads: 1, KeepAlive: true, PayloadBytes: d, Precision: 3},
				argv:   argv,
				server: benchdata.ServerInfo{Version: "7.2.4"},
				client: benchdata.ClientInfo{Redline: "0.1.0", Go: "go1.26.8", Hostname: "client-" + path, Kernel: "5.10.0", CPUs: 48},
				start:  epoch.Add(time.Duration(d+i) * time.Second)}
			doc.Results = append(doc.Results, rs.summary(rng))
		}
	}
	return doc
}
