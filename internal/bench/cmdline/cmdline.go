package cmdline

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"redline/internal/bench"
	"redline/internal/secret"
	"redline/internal/shellwords"
)

// Flags holds redis-benchmark's options plus redline's own. The CLI
// registers these flags on its bench command; the lab parses workload lines
// of scenario files with the same table, so the write-ups'
// redis-benchmark command lines work verbatim in both places.
type Flags struct {
	host, socket, password, user, uri string
	passFile                          string
	port, clients, dataSize, dbnum    int
	requests                          int64
	resp3, tracking                   bool
	threads, keepalive, pipeline      int
	KeySpace                          int64
	precision                         int
	seed                              uint64
	tls                               tlsFlags

	// Output and mode settings the caller acts on.
	Quiet, CSV, Loop, Idle, StdinArg bool
	ShowErrors, Version, Cluster     bool
	Workers                          int
	// WorkerHosts are the ssh destinations of --workers ssh:HOST,...:
	// one worker on each, through a redline session there.
	WorkerHosts []string
	// WorkersReadyTimeout bounds the wait for every --workers process
	// to be connected and ready (bench.WorkerReadyTimeout when zero).
	WorkersReadyTimeout       time.Duration
	TestList, Ratio           string
	JSONOut, HdrOut, Progress string

	duration, warmup, timeout time.Duration
	drain                     time.Duration
	connectRetries            int
	reconnect                 bool
	sentinel, masterName      string
	maxReply                  int
	keyIndex                  int
	readReplicas              bool
	connectRate               float64
	rate                      float64
	maxPending                int
	keyDist                   string
	keyStdDev, keyMedian      float64
	zipfExp                   float64
	sizeRange, sizeList       string

	// PasswordEnv is the password from the environment, used when neither
	// -a, the URI nor --pass-file gives one: the CLI sets it from
	// REDISCLI_AUTH; a scenario's workload lines leave it empty.
	PasswordEnv string

	fs *pflag.FlagSet
}

// New returns a Flags whose flags are defined on fs (a new
// set when fs is nil).
func New(fs *pflag.FlagSet) *Flags {
	if fs == nil {
		fs = pflag.NewFlagSet("bench", pflag.ContinueOnError)
		fs.SetInterspersed(false)
		fs.Usage = func() {}
		fs.SetOutput(io.Discard) // no deprecation notes from a library
	}
	f := &Flags{fs: fs}
	f.define(fs)
	return f
}

func (f *Flags) define(fl *pflag.FlagSet) {
	fl.StringVarP(&f.host, "host", "h", "127.0.0.1", "server hostname")
	fl.IntVarP(&f.port, "port", "p", 6379, "server port")
	fl.StringVarP(&f.socket, "socket", "s", "", "server unix socket (overrides host and port)")
	fl.StringVarP(&f.password, "pass", "a", "", "password for Redis AUTH (visible in ps: prefer --pass-file or REDISCLI_AUTH)")
	fl.StringVar(&f.password, "password", "", "old spelling of --pass") // the CLI hides it
	fl.StringVar(&f.passFile, "pass-file", "", "read the password for Redis AUTH from the first line of `FILE`")
	fl.StringVar(&f.user, "user", "", "ACL username for AUTH username password (needs a password)")
	fl.StringVarP(&f.uri, "uri", "u", "", "server URI: redis://[user:password@]host[:port][/db] (rediss:// for TLS)")
	fl.IntVarP(&f.clients, "clients", "c", bench.DefaultClients, "number of parallel connections")
	fl.Int64VarP(&f.requests, "requests", "n", bench.DefaultRequests, "total number of requests per test (0 with --duration: no limit)")
	fl.IntVarP(&f.dataSize, "data-size", "d", bench.DefaultDataSize, "value size in bytes for SET/GET/...")
	fl.IntVar(&f.dbnum, "dbnum", 0, "SELECT this db number")
	fl.BoolVarP(&f.resp3, "resp3", "3", false, "start sessions in RESP3 protocol mode (HELLO 3)")
	fl.IntVar(&f.threads, "threads", 0, "number of event-loop threads (default 1)")
	fl.BoolVar(&f.Cluster, "cluster", false, "Redis Cluster: -h/-p is a seed; each client opens a connection per primary and sends each request to its key's slot")
	fl.Var(workersValue{f}, "workers", "run the load from N local processes, or from ssh:HOST[,HOST...] (a redline session on each, docs/remote.md), with a common start, each a share of -c, -n and --rate; results merged exactly")
	fl.DurationVar(&f.WorkersReadyTimeout, "workers-ready-timeout", 0, "with --workers: fail the run when a worker has not connected its clients within this (default --timeout + 20s)")
	fl.BoolVar(&f.readReplicas, "read-from-replicas", false, "with --cluster: send read-only commands to the replicas of the slot's primary (READONLY)")
	fl.IntVar(&f.keyIndex, "key-index", 0, "with --cluster: route custom commands by argument N (1 = first after the command name) instead of COMMAND INFO")
	fl.BoolVar(&f.tracking, "enable-tracking", false, "send CLIENT TRACKING on before starting")
	fl.IntVarP(&f.keepalive, "keepalive", "k", 1, "1=keep alive 0=reconnect after every batch")
	fl.Int64VarP(&f.KeySpace, "keyspace", "r", 0, "random keys: replace __rand_int__ with a 12-digit number in [0, keyspace)")
	fl.IntVarP(&f.pipeline, "pipeline", "P", bench.DefaultPipeline, "pipeline this many requests")
	fl.BoolVarP(&f.Quiet, "quiet", "q", false, "quiet: just show requests/sec and p50")
	fl.IntVar(&f.precision, "precision", bench.DefaultPrecision, "latency histogram significant figures (1..5)")
	fl.BoolVar(&f.CSV, "csv", false, "output in CSV format")
	fl.BoolVarP(&f.Loop, "loop", "l", false, "loop: run the tests until interrupted")
	fl.StringVarP(&f.TestList, "tests", "t", "", "only run this comma-separated list of tests ("+strings.Join(bench.TestNames(), ",")+")")
	fl.BoolVarP(&f.Idle, "idle", "I", false, "idle mode: open N idle connections and wait")
	fl.BoolVarP(&f.StdinArg, "stdin", "x", false, "read the last argument of the command from standard input")
	fl.BoolVarP(&f.ShowErrors, "show-errors", "e", false, "no effect (errors always end the run with a message)")
	fl.BoolVarP(&f.Version, "version", "v", false, "print the version and exit")
	fl.Uint64Var(&f.seed, "seed", 0, "random seed (default: from the clock)")
	f.tls.define(fl)

	fl.DurationVar(&f.duration, "duration", 0, "run each test for this long instead of -n requests (e.g. 30s)")
	fl.DurationVar(&f.warmup, "warmup", 0, "send load for this long before measuring (not counted)")
	fl.Float64Var(&f.rate, "rate", 0, "fixed total rate in requests/s (open loop; latency from intended send times)")
	fl.IntVar(&f.maxPending, "max-pending", bench.DefaultMaxPending, "with --rate: most requests outstanding on one connection")
	fl.DurationVar(&f.timeout, "timeout", bench.DefaultTimeout, "longest wait for a connection or for each reply (bytes of a reply do not extend it)")
	fl.IntVar(&f.maxReply, "max-reply", 0, "most bytes one reply may take (default: what the tests' commands and -d can produce, with slack)")
	fl.IntVar(&f.connectRetries, "connect-retries", 0, "dial a failed connect again up to N times in a row before giving up")
	fl.BoolVar(&f.reconnect, "reconnect", false, "keep running through failures (a failover, a restart): failed requests and connects are counted per second and as outages, connections set up again with a backoff")
	fl.StringVar(&f.sentinel, "sentinel", "", "find the primary through the Sentinel at `HOST:PORT` and follow it across failovers (with --master-name; implies --reconnect)")
	fl.StringVar(&f.masterName, "master-name", "", "with --sentinel: the name of the primary Sentinel monitors")
	fl.Float64Var(&f.connectRate, "connect-rate", 0, "churn: open this many connections per second in total, each sending one request and closing (at most -c open at once)")
	fl.DurationVar(&f.drain, "drain", bench.DefaultDrain, "with --rate and --duration: how long after the end to keep sending and awaiting the requests due before it")
	fl.StringVarP(&f.JSONOut, "output", "o", "", "write the results as JSON to `FILE` (schema in docs/bench.md)")
	fl.StringVar(&f.JSONOut, "json", "", "old spelling of --output") // the CLI hides it
	fl.StringVar(&f.HdrOut, "hdr-out", "", "write each test's latency distribution to PREFIX-TEST.hgrm")
	fl.StringVar(&f.Ratio, "ratio", "", "memtier-style SET:GET mix, e.g. 1:10, instead of the suite")
	fl.StringVar(&f.keyDist, "key-dist", "uniform", "key distribution over -r: uniform, gaussian, zipf, sequential")
	fl.Float64Var(&f.keyStdDev, "key-stddev", 0, "gaussian keys: standard deviation (default keyspace/6)")
	fl.Float64Var(&f.keyMedian, "key-median", 0, "gaussian keys: median (default keyspace/2)")
	fl.Float64Var(&f.zipfExp, "zipf-exp", 0.99, "zipf keys: exponent s > 0")
	fl.StringVar(&f.sizeRange, "data-size-range", "", "value sizes drawn uniformly from MIN-MAX, e.g. 100-1000")
	fl.StringVar(&f.sizeList, "data-size-list", "", "value sizes SIZE:WEIGHT,..., e.g. 32:1,1024:3")
	fl.StringVar(&f.Progress, "progress", "auto", "progress display: auto, tty, plain, none")
}

// Parse parses args (options, then an optional custom command) and
// returns the custom command's arguments.
func (f *Flags) Parse(args []string) ([]string, error) {
	if err := f.fs.Parse(args); err != nil {
		return nil, err
	}
	return f.fs.Args(), nil
}

// HostSet reports whether the server was named (-h, -u or -s), not
// left at 127.0.0.1.
func (f *Flags) HostSet() bool {
	return f.fs.Changed("host") || f.fs.Changed("uri") || f.fs.Changed("socket")
}

// Options turns the parsed flags into Options, checking every value.
func (f *Flags) Options() (bench.Options, error) {
	o := bench.DefaultOptions()
	if err := f.target(&o); err != nil {
		return o, err
	}
	if err := f.auth(&o); err != nil {
		return o, err
	}
	if f.fs.Changed("dbnum") {
		o.DB = f.dbnum
	}
	checks := []struct {
		bad bool
		msg string
	}{
		{o.DB < 0, fmt.Sprintf("--dbnum must not be negative, got %d", o.DB)},
		{f.keepalive != 0 && f.keepalive != 1, fmt.Sprintf("-k takes 1 (keep alive) or 0 (reconnect), got %d", f.keepalive)},
		{f.KeySpace < 0, fmt.Sprintf("-r must not be negative, got %d", f.KeySpace)},
		{f.threads > 500, fmt.Sprintf("--threads %d: at most 500 threads", f.threads)},
	}
	for _, c := range checks {
		if c.bad {
			return o, fmt.Errorf("%s", c.msg)
		}
	}
	o.RESP3, o.Tracking = f.resp3, f.tracking
	o.Clients, o.Requests, o.Pipeline, o.Threads = f.clients, f.requests, f.pipeline, f.threads
	o.KeepAlive = f.keepalive == 1
	o.Duration, o.Warmup, o.Timeout = f.duration, f.warmup, f.timeout
	if f.duration > 0 && !f.fs.Changed("requests") {
		o.Requests = 0 // --duration alone runs for the duration
	}
	o.Rate, o.MaxPending, o.Drain = f.rate, f.maxPending, f.drain
	o.ConnectRetries, o.MaxReply = f.connectRetries, f.maxReply
	o.Reconnect, o.Sentinel, o.MasterName = f.reconnect || f.sentinel != "", f.sentinel, f.masterName
	o.Cluster, o.KeyIndex, o.ReadFromReplicas = f.Cluster, f.keyIndex, f.readReplicas
	if (o.KeyIndex > 0 || o.ReadFromReplicas) && !o.Cluster {
		return o, fmt.Errorf("--key-index and --read-from-replicas need --cluster")
	}
	o.ConnectRate = f.connectRate
	o.Precision = max(f.precision, 1)
	o.Seed = f.seed
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	o.Keys = bench.KeyOptions{Dist: bench.KeyDist(f.keyDist), Space: uint64(f.KeySpace), StdDev: f.keyStdDev, Median: f.keyMedian, ZipfExp: f.zipfExp}
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

// auth sets the password: -a, else the URI's, else --pass-file's, else
// PasswordEnv.
func (f *Flags) auth(o *bench.Options) error {
	flag := f.password
	if flag == "" {
		flag = o.Password // from the URI
	}
	pw, err := secret.Resolve(flag, f.passFile, f.PasswordEnv)
	if err != nil {
		return fmt.Errorf("--pass-file: %w", err)
	}
	if f.user != "" && pw == "" {
		return fmt.Errorf("--user needs a password: -a, --pass-file or REDISCLI_AUTH")
	}
	if f.user != "" {
		o.User = f.user
	}
	o.Password = pw
	return nil
}

func (f *Flags) sizes() (bench.SizeSpec, error) {
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
func (f *Flags) target(o *bench.Options) error {
	host, port := f.host, f.port
	if f.uri != "" {
		u, err := ParseRedisURI(f.uri)
		if err != nil {
			return err
		}
		host, port = u.Host, u.Port
		o.User, o.Password, o.DB = u.User, u.Password, u.DB
		if u.TLS {
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

// RedisURI is a parsed redis:// or rediss:// URI.
type RedisURI struct {
	Host, User, Password string
	Port, DB             int
	TLS                  bool
}

// ParseRedisURI parses redis://[[user]:password@]host[:port][/db].
func ParseRedisURI(s string) (RedisURI, error) {
	r := RedisURI{Host: "127.0.0.1", Port: 6379}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
		return r, fmt.Errorf("invalid URI %q: want redis://[user:password@]host[:port][/db] or rediss://...", s)
	}
	r.TLS = u.Scheme == "rediss"
	if h := u.Hostname(); h != "" {
		r.Host = h
	}
	if p := u.Port(); p != "" {
		if r.Port, err = strconv.Atoi(p); err != nil {
			return r, fmt.Errorf("invalid port in URI %q", s)
		}
	}
	if u.User != nil {
		r.User = u.User.Username()
		pw, ok := u.User.Password()
		r.Password = pw
		if !ok { // redis://password@host
			r.Password, r.User = r.User, ""
		}
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		if r.DB, err = strconv.Atoi(db); err != nil || r.DB < 0 {
			return r, fmt.Errorf("invalid database %q in URI %q", db, s)
		}
	}
	return r, nil
}

// Tests returns the custom command (its last argument read from stdin
// with -x), the SET:GET mix, or the selected suite tests.
func (f *Flags) Tests(args []string, stdin io.Reader) ([]bench.Test, []string, error) {
	var warnings []string
	if len(args) > 0 {
		if f.TestList != "" {
			warnings = append(warnings, "WARNING: Option -t is ignored.")
		}
		t := bench.CustomTest(args)
		if f.StdinArg {
			last, err := io.ReadAll(stdin)
			if err != nil {
				return nil, warnings, fmt.Errorf("-x: read standard input: %w", err)
			}
			t.Args = append(append([]string{}, args...), string(last))
		}
		return []bench.Test{t}, warnings, nil
	}
	if f.StdinArg {
		return nil, warnings, fmt.Errorf("-x needs a command: its last argument is read from standard input")
	}
	if f.Ratio != "" {
		t, err := RatioTest(f.Ratio)
		return []bench.Test{t}, warnings, err
	}
	var names []string
	if f.TestList != "" {
		names = strings.Split(f.TestList, ",")
	}
	tests, err := bench.SuiteTests(names, f.KeySpace > 0)
	return tests, warnings, err
}

// RatioTest builds memtier's SET:GET mix, e.g. "1:10".
func RatioTest(ratio string) (bench.Test, error) {
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

// Workload is a parsed workload line: options and tests.
type Workload struct {
	Options bench.Options
	Tests   []bench.Test
	Args    []string // the line's arguments after the program name
}

// ParseWorkload parses one command line as a scenario file holds it: shell
// quoting, and an optional leading "redis-benchmark", "redline bench" or
// path to either, so the write-ups' lines work as they are. Output and mode
// flags (-q, --csv, -l, -I, -o/--json) are accepted and ignored: the lab
// decides how long and how often to run.
func ParseWorkload(line string) (Workload, error) {
	shown := secret.RedactLine(line) // errors quote the line, never its password
	args, err := SplitShell(line)
	if err != nil {
		return Workload{}, fmt.Errorf("%q: %w", shown, err)
	}
	args = stripProgram(args)
	f := New(nil)
	custom, err := f.Parse(args)
	if err != nil {
		return Workload{}, fmt.Errorf("%q: %w", shown, err)
	}
	if f.Cluster {
		return Workload{}, fmt.Errorf("%q: --cluster is not supported in a scenario yet (target.cluster with kind: address)", shown)
	}
	if f.Workers > 0 {
		return Workload{}, fmt.Errorf("%q: --workers belongs to the scenario, not a workload line: client.workers (docs/lab.md)", shown)
	}
	if f.StdinArg || f.Idle {
		return Workload{}, fmt.Errorf("%q: -x and -I cannot be used in a scenario", shown)
	}
	o, err := f.Options()
	if err != nil {
		return Workload{}, fmt.Errorf("%q: %w", shown, err)
	}
	tests, _, err := f.Tests(custom, nil)
	if err != nil {
		return Workload{}, fmt.Errorf("%q: %w", shown, err)
	}
	return Workload{Options: o, Tests: tests, Args: args}, nil
}

func stripProgram(args []string) []string {
	if len(args) == 0 {
		return args
	}
	base := args[0][strings.LastIndex(args[0], "/")+1:]
	switch {
	case base == "redis-benchmark" || base == "valkey-benchmark":
		return args[1:]
	case base == "redline" && len(args) > 1 && args[1] == "bench":
		return args[2:]
	}
	return args
}

// SplitShell splits a command line with POSIX shell quoting; see
// shellwords.Split.
func SplitShell(s string) ([]string, error) { return shellwords.Split(s) }

// workersValue is --workers: a number of local processes, or
// ssh:HOST[,HOST...] for one worker on each host.
type workersValue struct{ f *Flags }

func (v workersValue) String() string {
	if v.f == nil || len(v.f.WorkerHosts) == 0 {
		if v.f == nil {
			return "0"
		}
		return strconv.Itoa(v.f.Workers)
	}
	return "ssh:" + strings.Join(v.f.WorkerHosts, ",")
}

func (v workersValue) Set(s string) error {
	if list, ok := strings.CutPrefix(s, "ssh:"); ok {
		hosts := strings.Split(list, ",")
		for _, h := range hosts {
			if !shellwords.ValidSSHDestination(h) {
				return fmt.Errorf("ssh:%s: %q is not an ssh destination: want ssh:[USER@]HOST[,...], hosts of your ssh config (port, key and known_hosts go there or in --ssh-config)", list, h)
			}
		}
		v.f.Workers, v.f.WorkerHosts = len(hosts), hosts
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q: want a number of local processes, or ssh:HOST[,HOST...]", s)
	}
	v.f.Workers, v.f.WorkerHosts = n, nil
	return nil
}

func (v workersValue) Type() string { return "N|ssh:HOSTS" }
