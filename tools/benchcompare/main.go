// Command benchcompare runs redline bench and redis-benchmark side by side
// against one redis-server and prints, per case, the median ratio
// (redline / redis-benchmark) of throughput and of client CPU seconds for
// the same number of requests, and the server's CPU per request, so the
// numbers can be read against the server-bound limit.
//
// Runs alternate A B B A, the server flushed before each run. With
// -cluster N both tools run with --cluster against N primaries started on
// loopback (CPU and flushes cover every primary).
//
//	go run ./tools/benchcompare [-pairs 6] [-redline bin/redline] [-addr host:port] [-cluster 3]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"redline/internal/redisadmin"
	"redline/internal/redisserver"
)

type benchCase struct {
	name     string
	clients  int
	pipeline int
	requests int
	threads  int // --threads for both tools; 0: none given
	// workers is redline's --workers (load processes, merged), against
	// redis-benchmark's --threads of the same number, its nearest.
	workers int
}

var cases = []benchCase{
	{"SET -c 32 -P 1", 32, 1, 400000, 0, 0},
	{"SET -c 32 -P 16", 32, 16, 3000000, 0, 0},
	{"SET -c 500 -P 1", 500, 1, 400000, 0, 0},
	{"SET -c 32 --threads 2", 32, 1, 400000, 2, 0},
	{"SET -c 40 --threads 40", 40, 1, 400000, 40, 0},
	{"SET -c 32 --workers 2", 32, 1, 400000, 0, 2},
}

// clusterCases run with -cluster N. redis-benchmark --cluster runs one
// thread per primary by default; redline one event loop unless told.
var clusterCases = []benchCase{
	{"SET --cluster -c 32 -P 1", 32, 1, 300000, 0, 0},
	{"SET --cluster -c 32 --threads 3", 32, 1, 300000, 3, 0},
	{"SET --cluster -c 32 -P 16", 32, 16, 2000000, 0, 0},
}

// target is the server(s) both tools load.
type target struct {
	seed    string
	nodes   []string // every primary (one for a single server)
	cluster bool
}

type sample struct {
	p50, p99, max float64 // ms
	rps           float64
	clientCPU     float64 // seconds, user+sys
	serverUS      float64 // server CPU microseconds per request
}

func main() {
	pairs := flag.Int("pairs", 6, "A/B pairs per case (at least 6)")
	redline := flag.String("redline", "bin/redline", "redline binary")
	rb := flag.String("redis-benchmark", "redis-benchmark", "redis-benchmark binary")
	addr := flag.String("addr", "", "use this server instead of starting one (host:port)")
	scale := flag.Float64("scale", 1, "multiply the request counts")
	only := flag.String("case", "", "run only cases whose name contains this")
	primaries := flag.Int("cluster", 0, "start a Redis Cluster of this many primaries and run the --cluster cases")
	flag.Parse()
	if err := run(*pairs, *redline, *rb, *addr, *scale, *only, *primaries); err != nil {
		fmt.Fprintln(os.Stderr, "benchcompare:", err)
		os.Exit(1)
	}
}

func run(pairs int, redline, rb, addr string, scale float64, only string, primaries int) error {
	ctx := context.Background()
	tg := target{seed: addr, nodes: []string{addr}}
	run := cases
	switch {
	case primaries > 0:
		c, err := redisserver.StartCluster(ctx, redisserver.ClusterOptions{Primaries: primaries,
			Server: redisserver.Options{Config: []string{"maxclients 10000"}}})
		if err != nil {
			return err
		}
		defer c.Stop()
		tg = target{seed: c.Seed(), cluster: true}
		for _, p := range c.Primaries {
			tg.nodes = append(tg.nodes, p.Addr())
		}
		run = clusterCases
	case addr == "":
		s, err := redisserver.Start(ctx, redisserver.Options{Config: []string{"maxclients 10000"}})
		if err != nil {
			return err
		}
		defer s.Stop()
		tg = target{seed: s.Addr(), nodes: []string{s.Addr()}}
	}
	ver, _ := exec.Command(rb, "--version").Output()
	fmt.Printf("server %s; %s; redline %s\n", strings.Join(tg.nodes, ","), strings.TrimSpace(string(ver)), redline)
	fmt.Printf("%-18s %12s %12s %7s %9s %9s %7s %10s %10s\n", "case", "redline rps", "r-b rps", "ratio", "rl cpu s", "rb cpu s", "ratio", "srv us/req", "srv bound")
	for _, c := range run {
		if only != "" && !strings.Contains(c.name, only) {
			continue
		}
		c.requests = int(float64(c.requests) * scale)
		var a, b []sample
		for i := range pairs {
			order := []bool{true, false} // A B
			if i%2 == 1 {
				order = []bool{false, true} // B A
			}
			for _, isA := range order {
				s, err := measure(ctx, tg, c, isA, redline, rb)
				if err != nil {
					return fmt.Errorf("%s: %w", c.name, err)
				}
				if isA {
					a = append(a, s)
				} else {
					b = append(b, s)
				}
			}
		}
		report(c, a, b)
	}
	return nil
}

func measure(ctx context.Context, tg target, c benchCase, redline bool, rlBin, rbBin string) (sample, error) {
	host, port, _ := strings.Cut(tg.seed, ":")
	var admins []*redisadmin.Conn
	defer func() {
		for _, a := range admins {
			a.Close()
		}
	}()
	for _, addr := range tg.nodes {
		// FLUSHALL of millions of keys on a busy machine takes seconds.
		admin, err := redisadmin.Dial(ctx, redisadmin.Options{Addr: addr, Timeout: time.Minute})
		if err != nil {
			return sample{}, err
		}
		admins = append(admins, admin)
		if _, err := admin.Do(ctx, "FLUSHALL"); err != nil {
			return sample{}, err
		}
	}
	cpu0, err := serverCPU(ctx, admins)
	if err != nil {
		return sample{}, err
	}
	args := []string{"-h", host, "-p", port, "-t", "set", "-c", strconv.Itoa(c.clients), "-P", strconv.Itoa(c.pipeline),
		"-n", strconv.Itoa(c.requests), "-r", "1000000", "--csv"}
	if tg.cluster {
		args = append(args, "--cluster")
	}
	if c.threads > 0 {
		args = append(args, "--threads", strconv.Itoa(c.threads))
	}
	bin := rbBin
	switch {
	case redline && c.workers > 0:
		args = append(args, "--workers", strconv.Itoa(c.workers))
	case c.workers > 0:
		args = append(args, "--threads", strconv.Itoa(c.workers))
	}
	if redline {
		bin = rlBin
		args = append([]string{"bench"}, append(args, "--progress", "none")...)
	}
	cmd := exec.Command(bin, args...)
	out, err := cmd.Output()
	if err != nil {
		return sample{}, fmt.Errorf("%s %s: %w", bin, strings.Join(args, " "), err)
	}
	cpu1, err := serverCPU(ctx, admins)
	if err != nil {
		return sample{}, err
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	s := sample{clientCPU: tv(ru.Utime) + tv(ru.Stime), serverUS: (cpu1 - cpu0) * 1e6 / float64(c.requests)}
	f, err := csvRow(string(out))
	if err != nil {
		return s, err
	}
	s.rps, s.p50, s.p99, s.max = f[0], f[3], f[5], f[6]
	return s, nil
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// serverCPU returns the servers' CPU seconds so far.
func serverCPU(ctx context.Context, cs []*redisadmin.Conn) (float64, error) {
	var sum float64
	for _, c := range cs {
		info, err := c.Info(ctx, "cpu")
		if err != nil {
			return 0, err
		}
		sum += info.CPUSeconds()
	}
	return sum, nil
}

// csvRow returns the SET row's numbers: rps, avg, min, p50, p95, p99, max.
func csvRow(out string) ([]float64, error) {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, `"SET"`) {
			var v []float64
			for _, f := range strings.Split(line, ",")[1:] {
				x, err := strconv.ParseFloat(strings.Trim(f, `"`), 64)
				if err != nil {
					return nil, fmt.Errorf("SET row %q: %w", line, err)
				}
				v = append(v, x)
			}
			if len(v) < 7 {
				return nil, fmt.Errorf("short SET row %q", line)
			}
			return v, nil
		}
	}
	return nil, fmt.Errorf("no SET row in output %q", out)
}

func report(c benchCase, a, b []sample) {
	var rpsRatio, cpuRatio []float64
	for i := range a {
		rpsRatio = append(rpsRatio, a[i].rps/b[i].rps)
		cpuRatio = append(cpuRatio, a[i].clientCPU/b[i].clientCPU)
	}
	pick := func(s []sample, f func(sample) float64) float64 {
		var v []float64
		for _, x := range s {
			v = append(v, f(x))
		}
		return median(v)
	}
	rps := func(s sample) float64 { return s.rps }
	cpu := func(s sample) float64 { return s.clientCPU }
	srv := func(s sample) float64 { return s.serverUS }
	srvUS := median(append(valuesOf(a, srv), valuesOf(b, srv)...))
	fmt.Printf("%-18s %12.0f %12.0f %7.3f %9.3f %9.3f %7.3f %10.2f %10.0f\n", c.name,
		pick(a, rps), pick(b, rps), median(rpsRatio), pick(a, cpu), pick(b, cpu), median(cpuRatio), srvUS, 1e6/srvUS)
	fmt.Printf("%-18s   redline rps %s\n%-18s   r-b rps     %s\n", "", list(a, rps), "", list(b, rps))
	lat := func(s []sample) string {
		return fmt.Sprintf("p50 %.3f p99 %.3f max %.3f ms", pick(s, func(x sample) float64 { return x.p50 }),
			pick(s, func(x sample) float64 { return x.p99 }), pick(s, func(x sample) float64 { return x.max }))
	}
	fmt.Printf("%-18s   latency     redline %s; redis-benchmark %s (medians)\n", "", lat(a), lat(b))
	fmt.Printf("%-18s   srv us/req  redline %.2f, redis-benchmark %.2f (%d requests per run, %d pairs)\n", "", pick(a, srv), pick(b, srv), c.requests, len(a))
}

func valuesOf(s []sample, f func(sample) float64) []float64 {
	var v []float64
	for _, x := range s {
		v = append(v, f(x))
	}
	return v
}

func list(s []sample, f func(sample) float64) string {
	var parts []string
	for _, x := range s {
		parts = append(parts, fmt.Sprintf("%.0f", f(x)))
	}
	return strings.Join(parts, " ")
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
