package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"redline/internal/bench"
)

func init() { register(newBenchCmd) }

// benchFlags mirrors redis-benchmark's options plus redline's own.
type benchFlags struct {
	host, socket, password, user, uri string
	port, clients, dataSize, dbnum    int
	requests                          int64
	resp3, cluster, tracking          bool
	threads, keepalive, pipeline      int
	keyspace                          int64
	quiet, csv, loop, idle, stdinArg  bool
	showErrors, version               bool
	precision                         int
	tests                             string
	seed                              uint64
	tls                               tlsFlags

	duration, warmup, timeout time.Duration
	rate                      float64
	maxPending                int
	jsonOut, hdrOut           string
	ratio                     string
	keyDist                   string
	keyStdDev, keyMedian      float64
	zipfExp                   float64
	sizeRange, sizeList       string
	progress                  string
}

func newBenchCmd(s *streams) *cobra.Command {
	f := &benchFlags{}
	cmd := &cobra.Command{
		Use:   "bench [options] [command args...]",
		Short: "redis-benchmark-compatible load generator (same flags and output), faster and more accurate",
		Long: `bench accepts redis-benchmark's command lines unchanged and prints what redis-benchmark
prints (the report block, -q lines, --csv), from a load generator that costs less client CPU
and measures each request's own latency (not a pipeline batch's time to first byte).

Beyond redis-benchmark: --duration and --warmup; --rate for fixed-rate open-loop load with
latency timed from each request's intended send time (coordinated omission corrected);
--json with the full HDR histogram; --hdr-out; --ratio SET:GET; --key-dist uniform|gaussian|
zipf|sequential; value sizes as ranges or weighted lists. Errors end the run with a message,
partial results and a non-zero exit, never a hang.`,
		Example: `  redline bench -t set,get -c 32 -n 500000 -r 500000 --threads 6 -q --csv -h 10.0.0.5
  redline bench -h 10.0.0.5 -p 6379 -n 1000000 -c 5000 -q
  redline bench -t set -c 40 -d 3000 -r 100000 --duration 30s --warmup 5s --json set.json
  redline bench --rate 50000 --duration 20s -t get -r 100000
  redline bench --ratio 1:10 -r 100000 --key-dist zipf -n 1000000
  redline bench -r 10000 -n 10000 lpush mylist __rand_int__`,
		Args:              cobra.ArbitraryArgs,
		DisableAutoGenTag: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBench(cmd.Context(), s, f, cmd.Flags(), args)
		},
	}
	fl := cmd.Flags()
	fl.SetInterspersed(false) // the first non-option starts the custom command
	f.define(fl)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return exitCode(ExitFailure, fmt.Sprintf("redline bench: %v (see redline bench --help)", err))
	})
	return cmd
}

func (f *benchFlags) define(fl *pflag.FlagSet) {
	fl.StringVarP(&f.host, "host", "h", "127.0.0.1", "server hostname")
	fl.IntVarP(&f.port, "port", "p", 6379, "server port")
	fl.StringVarP(&f.socket, "socket", "s", "", "server unix socket (overrides host and port)")
	fl.StringVarP(&f.password, "password", "a", "", "password for Redis AUTH")
	fl.StringVar(&f.user, "user", "", "ACL username for AUTH username password (needs -a)")
	fl.StringVarP(&f.uri, "uri", "u", "", "server URI: redis://[user:password@]host[:port][/db] (rediss:// for TLS)")
	fl.IntVarP(&f.clients, "clients", "c", bench.DefaultClients, "number of parallel connections")
	fl.Int64VarP(&f.requests, "requests", "n", bench.DefaultRequests, "total number of requests per test (0 with --duration: no limit)")
	fl.IntVarP(&f.dataSize, "data-size", "d", bench.DefaultDataSize, "value size in bytes for SET/GET/...")
	fl.IntVar(&f.dbnum, "dbnum", 0, "SELECT this db number")
	fl.BoolVarP(&f.resp3, "resp3", "3", false, "start sessions in RESP3 protocol mode (HELLO 3)")
	fl.IntVar(&f.threads, "threads", 0, "number of event-loop threads (default 1)")
	fl.BoolVar(&f.cluster, "cluster", false, "cluster mode (not supported yet)")
	fl.BoolVar(&f.tracking, "enable-tracking", false, "send CLIENT TRACKING on before starting")
	fl.IntVarP(&f.keepalive, "keepalive", "k", 1, "1=keep alive 0=reconnect after every batch")
	fl.Int64VarP(&f.keyspace, "keyspace", "r", 0, "random keys: replace __rand_int__ with a 12-digit number in [0, keyspace)")
	fl.IntVarP(&f.pipeline, "pipeline", "P", bench.DefaultPipeline, "pipeline this many requests")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "quiet: just show requests/sec and p50")
	fl.IntVar(&f.precision, "precision", bench.DefaultPrecision, "latency histogram significant figures (1..5)")
	fl.BoolVar(&f.csv, "csv", false, "output in CSV format")
	fl.BoolVarP(&f.loop, "loop", "l", false, "loop: run the tests until interrupted")
	fl.StringVarP(&f.tests, "tests", "t", "", "only run this comma-separated list of tests ("+strings.Join(bench.TestNames(), ",")+")")
	fl.BoolVarP(&f.idle, "idle", "I", false, "idle mode: open N idle connections and wait")
	fl.BoolVarP(&f.stdinArg, "stdin", "x", false, "read the last argument of the command from standard input")
	fl.BoolVarP(&f.showErrors, "show-errors", "e", false, "no effect (errors always end the run with a message)")
	fl.BoolVarP(&f.version, "version", "v", false, "print the version and exit")
	fl.Uint64Var(&f.seed, "seed", 0, "random seed (default: from the clock)")
	f.tls.define(fl)

	fl.DurationVar(&f.duration, "duration", 0, "run each test for this long instead of -n requests (e.g. 30s)")
	fl.DurationVar(&f.warmup, "warmup", 0, "send load for this long before measuring (not counted)")
	fl.Float64Var(&f.rate, "rate", 0, "fixed total rate in requests/s (open loop; latency from intended send times)")
	fl.IntVar(&f.maxPending, "max-pending", bench.DefaultMaxPending, "with --rate: most requests outstanding on one connection")
	fl.DurationVar(&f.timeout, "timeout", bench.DefaultTimeout, "longest wait for a connection or for any reply")
	fl.StringVar(&f.jsonOut, "json", "", "write results as JSON to this file (schema in docs/bench.md)")
	fl.StringVar(&f.hdrOut, "hdr-out", "", "write each test's latency distribution to PREFIX-TEST.hgrm")
	fl.StringVar(&f.ratio, "ratio", "", "memtier-style SET:GET mix, e.g. 1:10, instead of the suite")
	fl.StringVar(&f.keyDist, "key-dist", "uniform", "key distribution over -r: uniform, gaussian, zipf, sequential")
	fl.Float64Var(&f.keyStdDev, "key-stddev", 0, "gaussian keys: standard deviation (default keyspace/6)")
	fl.Float64Var(&f.keyMedian, "key-median", 0, "gaussian keys: median (default keyspace/2)")
	fl.Float64Var(&f.zipfExp, "zipf-exp", 0.99, "zipf keys: exponent s > 0")
	fl.StringVar(&f.sizeRange, "data-size-range", "", "value sizes drawn uniformly from MIN-MAX, e.g. 100-1000")
	fl.StringVar(&f.sizeList, "data-size-list", "", "value sizes SIZE:WEIGHT,..., e.g. 32:1,1024:3")
	fl.StringVar(&f.progress, "progress", "auto", "progress display: auto, tty, plain, none")
}

// options turns the flags into bench.Options, checking every value.
func (f *benchFlags) options(fl *pflag.FlagSet) (bench.Options, error) {
	o := bench.DefaultOptions()
	if err := f.target(&o, fl); err != nil {
		return o, err
	}
	if f.user != "" && f.password == "" && f.uri == "" {
		return o, fmt.Errorf("--user needs -a PASSWORD")
	}
	if f.user != "" {
		o.User = f.user
	}
	if f.password != "" {
		o.Password = f.password
	}
	if fl.Changed("dbnum") {
		o.DB = f.dbnum
	}
	if o.DB < 0 {
		return o, fmt.Errorf("--dbnum must not be negative, got %d", o.DB)
	}
	if f.keepalive != 0 && f.keepalive != 1 {
		return o, fmt.Errorf("-k takes 1 (keep alive) or 0 (reconnect), got %d", f.keepalive)
	}
	if f.keyspace < 0 {
		return o, fmt.Errorf("-r must not be negative, got %d", f.keyspace)
	}
	if f.threads > 500 {
		return o, fmt.Errorf("--threads %d: at most 500 threads", f.threads)
	}
	o.RESP3, o.Tracking = f.resp3, f.tracking
	o.Clients, o.Requests, o.Pipeline, o.Threads = f.clients, f.requests, f.pipeline, f.threads
	o.KeepAlive = f.keepalive == 1
	o.Duration, o.Warmup, o.Timeout = f.duration, f.warmup, f.timeout
	if f.duration > 0 && !fl.Changed("requests") {
		o.Requests = 0 // --duration alone runs for the duration
	}
	o.Rate, o.MaxPending = f.rate, f.maxPending
	o.Precision = max(f.precision, 1)
	o.Seed = f.seed
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	o.Keys = bench.KeyOptions{Dist: bench.KeyDist(f.keyDist), Space: uint64(f.keyspace), StdDev: f.keyStdDev, Median: f.keyMedian, ZipfExp: f.zipfExp}
	sizes, err := f.sizes()
	if err != nil {
		return o, err
	}
	o.Sizes = sizes
	if o.TLS, err = f.tls.config(o.Addr); err != nil {
		return o, err
	}
	return o, o.Validate()
}

func (f *benchFlags) sizes() (bench.SizeSpec, error) {
	switch {
	case f.sizeRange != "" && f.sizeList != "":
		return bench.SizeSpec{}, fmt.Errorf("give --data-size-range or --data-size-list, not both")
	case f.sizeRange != "":
		return bench.ParseSizeRange(f.sizeRange)
	case f.sizeList != "":
		return bench.ParseSizeList(f.sizeList)
	}
	if f.dataSize < 1 || f.dataSize > bench.MaxValueSize {
		return bench.SizeSpec{}, fmt.Errorf("-d must be 1..%d bytes, got %d", bench.MaxValueSize, f.dataSize)
	}
	return bench.SizeSpec{Min: f.dataSize, Max: f.dataSize}, nil
}

// target sets the address from -h/-p, -s or -u.
func (f *benchFlags) target(o *bench.Options, fl *pflag.FlagSet) error {
	host, port := f.host, f.port
	if f.uri != "" {
		u, err := parseRedisURI(f.uri)
		if err != nil {
			return err
		}
		host, port = u.host, u.port
		o.User, o.Password, o.DB = u.user, u.password, u.db
		if u.tls {
			f.tls.enabled = true
		}
	}
	if port < 1 || port > 65535 {
		return fmt.Errorf("invalid server port %d: want 1..65535", port)
	}
	if f.socket != "" {
		o.Network, o.Addr = "unix", f.socket
		return nil
	}
	o.Network, o.Addr = "tcp", net.JoinHostPort(host, strconv.Itoa(port))
	return nil
}

type redisURI struct {
	host, user, password string
	port, db             int
	tls                  bool
}

// parseRedisURI parses redis://[[user]:password@]host[:port][/db].
func parseRedisURI(s string) (redisURI, error) {
	r := redisURI{host: "127.0.0.1", port: 6379}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
		return r, fmt.Errorf("invalid URI %q: want redis://[user:password@]host[:port][/db] or rediss://...", s)
	}
	r.tls = u.Scheme == "rediss"
	if h := u.Hostname(); h != "" {
		r.host = h
	}
	if p := u.Port(); p != "" {
		if r.port, err = strconv.Atoi(p); err != nil {
			return r, fmt.Errorf("invalid port in URI %q", s)
		}
	}
	if u.User != nil {
		r.user = u.User.Username()
		r.password, _ = u.User.Password()
		if _, ok := u.User.Password(); !ok { // redis://password@host
			r.password, r.user = r.user, ""
		}
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		if r.db, err = strconv.Atoi(db); err != nil || r.db < 0 {
			return r, fmt.Errorf("invalid database %q in URI %q", db, s)
		}
	}
	return r, nil
}

func runBench(ctx context.Context, s *streams, f *benchFlags, fl *pflag.FlagSet, args []string) error {
	if f.version {
		fmt.Fprintf(s.out, "redline bench %s (redis-benchmark 7.2 compatible)\n", Version())
		return nil
	}
	if f.cluster {
		return exitCode(ExitFailure, "redline bench: --cluster is not supported yet; benchmark one node at a time (-h/-p), or use memtier_benchmark --cluster-mode")
	}
	if f.showErrors {
		fmt.Fprintln(s.err, "WARNING: -e option has no effect. We now immediately exit on error to avoid false results.")
	}
	o, err := f.options(fl)
	if err != nil {
		return exitCode(ExitFailure, "redline bench: "+err.Error())
	}
	if f.idle {
		return runIdle(ctx, s, o)
	}
	tests, err := f.buildTests(s, args)
	if err != nil {
		return exitCode(ExitFailure, "redline bench: "+err.Error())
	}
	if !o.KeepAlive {
		fmt.Fprintln(s.err, "WARNING: keepalive disabled, you probably need 'echo 1 > /proc/sys/net/ipv4/tcp_tw_reuse' for Linux in order to use a lot of clients/requests")
	}
	info, err := bench.FetchServerInfo(ctx, o)
	if err != nil {
		return exitCode(ExitFailure, err.Error())
	}
	if info.ConfigErr != "" {
		fmt.Fprintf(s.err, "WARNING: Could not fetch server CONFIG: %s\n", info.ConfigErr)
	}
	r := &benchRun{s: s, f: f, o: o, info: info, argv: s.argv}
	r.progress = newProgressPrinter(s, f)
	r.o.Progress = r.progress.show
	return r.run(ctx, tests)
}

// buildTests returns the custom command, the SET:GET mix or the suite.
func (f *benchFlags) buildTests(s *streams, args []string) ([]bench.Test, error) {
	if len(args) > 0 {
		if f.tests != "" {
			fmt.Fprintln(s.err, "WARNING: Option -t is ignored.")
		}
		t := bench.CustomTest(args)
		if f.stdinArg {
			last, err := io.ReadAll(s.in)
			if err != nil {
				return nil, fmt.Errorf("-x: read standard input: %w", err)
			}
			t.Args = append(append([]string{}, args...), string(last))
		}
		return []bench.Test{t}, nil
	}
	if f.stdinArg {
		return nil, fmt.Errorf("-x needs a command: its last argument is read from standard input")
	}
	if f.ratio != "" {
		t, err := ratioTest(f.ratio)
		return []bench.Test{t}, err
	}
	var names []string
	if f.tests != "" {
		names = strings.Split(f.tests, ",")
	}
	return bench.SuiteTests(names, f.keyspace > 0)
}

// ratioTest builds memtier's SET:GET mix.
func ratioTest(ratio string) (bench.Test, error) {
	a, b, ok := strings.Cut(ratio, ":")
	sets, err1 := strconv.Atoi(a)
	gets, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || sets < 0 || gets < 0 || sets+gets == 0 || sets+gets > 255 {
		return bench.Test{}, fmt.Errorf("bad --ratio %q: want SETS:GETS, e.g. 1:10 (weights 0..255, not both 0)", ratio)
	}
	t := bench.Test{Title: "SET:GET " + ratio}
	if sets > 0 {
		t.Mix = append(t.Mix, bench.MixPart{Name: "SET", Args: []string{"SET", "key:__rand_int__", bench.Data}, Weight: sets})
	}
	if gets > 0 {
		t.Mix = append(t.Mix, bench.MixPart{Name: "GET", Args: []string{"GET", "key:__rand_int__"}, Weight: gets})
	}
	return t, nil
}

// benchRun prints and saves the results of a sequence of tests.
type benchRun struct {
	s        *streams
	f        *benchFlags
	o        bench.Options
	info     bench.ServerInfo
	argv     []string
	progress *progressPrinter
	results  []*bench.Summary
	started  time.Time
}

func (r *benchRun) run(ctx context.Context, tests []bench.Test) error {
	r.started = time.Now()
	if r.f.csv {
		io.WriteString(r.s.out, bench.CSVHeader)
	}
	payload := bench.NewPayload()
	custom := len(tests) == 1 && tests[0].Mix == nil && r.f.ratio == "" && !isSuite(tests[0])
	for {
		data := payload.Next(r.o.Sizes.Largest())
		for _, t := range tests {
			if err := r.one(ctx, t, data, custom); err != nil {
				return err
			}
		}
		if !r.f.csv && !custom {
			fmt.Fprintln(r.s.out)
		}
		if !r.f.loop || ctx.Err() != nil {
			return nil
		}
	}
}

func isSuite(t bench.Test) bool {
	all, _ := bench.SuiteTests(nil, false)
	for _, s := range all {
		if s.Title == t.Title {
			return true
		}
	}
	return false
}

// one runs a test, prints it and saves the JSON so far.
func (r *benchRun) one(ctx context.Context, t bench.Test, data []byte, custom bool) error {
	r.progress.begin(t.Title)
	sum, err := bench.Run(ctx, r.o, t, data)
	r.progress.end()
	if sum == nil {
		if err == nil {
			err = errors.New("no result")
		}
		return exitCode(ExitFailure, err.Error())
	}
	sum.Server = r.info
	sum.Client = bench.LocalClientInfo(Version())
	sum.CommandLine = r.argv
	if custom {
		sum.Config.PayloadBytes = len(encodeCommand(t.Args))
	}
	r.results = append(r.results, sum)
	if werr := r.save(sum); werr != nil {
		return exitCode(ExitFailure, werr.Error())
	}
	interrupted := errors.Is(err, bench.ErrInterrupted)
	if err == nil || interrupted {
		r.print(sum)
	}
	switch {
	case interrupted:
		return exitCode(ExitSignaled, fmt.Sprintf("interrupted: the results above cover the %d requests measured before Ctrl-C", sum.Requests))
	case err != nil:
		msg := err.Error()
		if sum.Requests > 0 {
			msg += fmt.Sprintf("\n(%d requests were measured before the error", sum.Requests)
			if r.f.jsonOut != "" {
				msg += "; partial results saved in " + r.f.jsonOut
			}
			msg += ")"
		}
		return exitCode(ExitFailure, msg)
	}
	return nil
}

func (r *benchRun) print(sum *bench.Summary) {
	switch {
	case r.f.csv:
		bench.WriteCSVRow(r.s.out, sum)
	case r.f.quiet:
		bench.WriteQuiet(r.s.out, sum)
	default:
		bench.WriteReport(r.s.out, sum)
	}
}

// save rewrites the JSON file and the HDR file after every test, so a crash
// or Ctrl-C keeps what was measured.
func (r *benchRun) save(sum *bench.Summary) error {
	if r.f.hdrOut != "" {
		if err := bench.WriteHgrmFile(r.f.hdrOut, sum); err != nil {
			return err
		}
	}
	if r.f.jsonOut == "" {
		return nil
	}
	doc := bench.Document{Schema: bench.DocumentSchema, Redline: Version(), CommandLine: r.argv, Started: r.started, Results: r.results}
	return bench.WriteDocument(r.f.jsonOut, doc)
}
