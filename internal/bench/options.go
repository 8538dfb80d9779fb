package bench

import (
	"context"
	"crypto/tls"
	"fmt"
	"io/fs"
	"math"
	"time"
)

// Defaults, as in redis-benchmark where it has the setting.
const (
	DefaultClients   = 50
	DefaultRequests  = 100000
	DefaultDataSize  = 3
	DefaultPipeline  = 1
	DefaultPrecision = 3
	DefaultTimeout   = 10 * time.Second
	// MaxRate is the highest --rate or --connect-rate: 100 million a
	// second, 10 ns apart on one loop, well above any server.
	MaxRate           = 1e8
	DefaultMaxPending = 1000
	DefaultDrain      = 10 * time.Second
)

// Options configures one benchmark run. The zero value is not usable; start
// from DefaultOptions.
type Options struct {
	Network string      // "tcp" or "unix"
	Addr    string      // host:port, or the socket path for "unix"
	TLS     *tls.Config `json:"-"` // nil: plain connections
	// NetNS, when set, names the network namespace (ip netns) the load
	// comes from: every connection is made from inside it.
	NetNS string
	// CPUs, when set, pins the load generator's event-loop threads to
	// these CPUs (a client/server CPU layout).
	CPUs []int

	User, Password string // AUTH [user] password on every connection
	DB             int    // SELECT db on every connection when > 0
	RESP3          bool   // HELLO 3 on every connection
	Tracking       bool   // CLIENT TRACKING on, on every connection

	Clients   int   // connections
	Requests  int64 // requests per test; 0 with Duration: until the duration ends
	Duration  time.Duration
	Warmup    time.Duration // load before measuring starts; not counted
	Pipeline  int           // requests per batch (closed loop)
	Threads   int           // event loops; 0 means 1
	KeepAlive bool          // false: reconnect after every batch (-k 0)

	// Cluster treats Addr as a seed of a Redis Cluster: requests go to
	// the primary that serves their key's slot (see cluster.go). KeyIndex,
	// when > 0, is the argument index of the key to route by (1 is the
	// first argument after the command name) instead of COMMAND INFO's.
	Cluster  bool
	KeyIndex int
	// ReadFromReplicas sends read-only commands (COMMAND INFO's readonly
	// flag) to the replicas of the slot's primary, in turn, over
	// connections set up with READONLY.
	ReadFromReplicas bool

	// Ready, when set, is called once every connection is ready; the
	// measurement starts when it returns, and an error ends the run
	// before it. A --workers process reports ready there and waits for
	// the common start (the ready barrier, workers.go).
	Ready func(context.Context) error `json:"-"`

	Keys  KeyOptions
	Sizes SizeSpec

	// Rate, when > 0, sends requests open-loop at this many per second in
	// total, each timed from its intended send time; MaxPending bounds the
	// requests outstanding on one connection.
	Rate       float64
	MaxPending int
	// Drain bounds, in rate mode with a Duration, how long after the end
	// the run keeps sending the requests that fell due before it (late
	// because every connection was full) and awaiting their replies: a
	// stall that outlasts the run is measured, not dropped. What is still
	// unsent or unanswered at the limit is reported, not timed.
	Drain time.Duration

	// ConnectRetries is how many times in a row a failed connect is dialled
	// again at once before the run ends; 0, as in redis-benchmark, ends it
	// at the first.
	ConnectRetries int

	// Reconnect keeps the run going through failures (failover.go): a
	// connection closed, reset, refused or silent for Timeout, and the
	// error replies of a failover (-LOADING, -READONLY, -MASTERDOWN,
	// -TRYAGAIN, -CLUSTERDOWN) fail the requests they took and are
	// counted; the connection is dialled again, at once and then with a
	// backoff doubling up to ReconnectMax (0: DefaultReconnectMax).
	Reconnect    bool
	ReconnectMax time.Duration
	// Sentinel, with MasterName, finds the primary through the Sentinel
	// at this host:port and follows it across failovers (sentinel.go);
	// it implies Reconnect.
	Sentinel, MasterName string

	// ConnectRate, when > 0, is churn mode (churn.go): connections opened
	// at this many per second in total, each sending its set-up commands
	// and one request, then closed; at most Clients are open at once.
	ConnectRate float64
	// ServerNetNS names the network namespace of the server's host when
	// it is readable but not the load's (the lab's netns target), so the
	// kernel's listen-queue counters are read there (netevidence.go).
	ServerNetNS string
	// ServerProc, when set, reads the server host's /proc as of the call
	// (an fs.FS rooted at /proc): the listen queue's counters of a server
	// on another machine (a lab's ssh target), instead of ServerNetNS.
	ServerProc func(context.Context) (fs.FS, error) `json:"-"`

	Precision int // HDR significant figures, 1..5
	// Timeout is the longest wait for a connect, and for each reply from
	// the moment it is awaited (its request sent, or the reply before it
	// complete): bytes that arrive without completing one do not extend it.
	Timeout time.Duration
	// MaxReply, when > 0, is the most one reply may take; 0 derives it
	// from the workload (maxReply).
	MaxReply int
	Seed     uint64 // 0: seeded from the clock

	// Progress, if set, is called every ProgressInterval from a separate
	// goroutine while a test runs.
	Progress         func(Progress) `json:"-"`
	ProgressInterval time.Duration
	// ProgressFinal adds one last call, with Final set, when the test
	// ends: it covers the replies since the previous call (a shorter
	// interval), so a stall that ends in the test's last moments shows.
	ProgressFinal bool
}

// DefaultOptions returns redis-benchmark's defaults against 127.0.0.1:6379.
func DefaultOptions() Options {
	return Options{
		Network:    "tcp",
		Addr:       "127.0.0.1:6379",
		Clients:    DefaultClients,
		Requests:   DefaultRequests,
		Pipeline:   DefaultPipeline,
		KeepAlive:  true,
		Sizes:      SizeSpec{Min: DefaultDataSize, Max: DefaultDataSize},
		Precision:  DefaultPrecision,
		Timeout:    DefaultTimeout,
		MaxPending: DefaultMaxPending,
		Drain:      DefaultDrain,
	}
}

// Validate checks the options and says what to change.
func (o *Options) Validate() error {
	checks := []struct {
		bad bool
		msg string
	}{
		{o.Clients < 1, fmt.Sprintf("clients must be at least 1, got %d (-c)", o.Clients)},
		{o.Requests < 0, fmt.Sprintf("requests must not be negative, got %d (-n)", o.Requests)},
		{o.Requests == 0 && o.Duration <= 0, "nothing to do: -n 0 without --duration (give -n N or --duration D)"},
		{o.Pipeline < 1, fmt.Sprintf("pipeline must be at least 1, got %d (-P)", o.Pipeline)},
		{o.Threads < 0, fmt.Sprintf("threads must not be negative, got %d (--threads)", o.Threads)},
		{o.Precision < 1 || o.Precision > 5, fmt.Sprintf("precision must be 1..5 significant figures, got %d (--precision)", o.Precision)},
		{o.Rate < 0, fmt.Sprintf("rate must not be negative, got %v (--rate)", o.Rate)},
		// The pacer spaces requests by whole nanoseconds: above this the
		// spacing is 0 and the schedule never ends.
		{math.IsNaN(o.Rate) || o.Rate > MaxRate, fmt.Sprintf("rate %v is beyond what can be paced (at most %g requests/s; leave --rate out to send as fast as possible)", o.Rate, MaxRate)},
		{o.Rate > 0 && o.MaxPending < 1, "max pending must be at least 1 with --rate"},
		{o.Timeout <= 0, "timeout must be positive (--timeout)"},
		{o.MaxReply < 0, fmt.Sprintf("max reply must not be negative, got %d (--max-reply)", o.MaxReply)},
		{o.Cluster && o.TLS != nil, "--cluster with --tls is not supported yet"},
		{o.Cluster && !o.KeepAlive, "--cluster with -k 0 is not supported yet"},
		{o.Cluster && o.ConnectRate > 0, "--cluster with --connect-rate is not supported yet"},
		{o.Cluster && o.DB != 0, "--cluster: a cluster has only database 0 (drop --dbnum)"},
		{o.Cluster && o.Network != "tcp", "--cluster needs a TCP seed address (-h and -p), not a unix socket"},
		{(o.Sentinel == "") != (o.MasterName == ""), "--sentinel and --master-name go together"},
		{o.Sentinel != "" && o.Cluster, "--sentinel and --cluster exclude each other"},
		{o.Reconnect && (o.TLS != nil || o.ConnectRate > 0 || !o.KeepAlive), "--reconnect (and --sentinel) are not supported with --tls, --connect-rate or -k 0 yet"},
		{o.ReconnectMax < 0, "the reconnect backoff must not be negative"},
		{o.KeyIndex < 0, fmt.Sprintf("key index must not be negative, got %d (--key-index)", o.KeyIndex)},
		{o.ConnectRate < 0, fmt.Sprintf("connect rate must not be negative, got %v (--connect-rate)", o.ConnectRate)},
		{math.IsNaN(o.ConnectRate) || o.ConnectRate > MaxRate, fmt.Sprintf("connect rate %v is beyond what can be paced (at most %g connections/s)", o.ConnectRate, MaxRate)},
		{o.ConnectRate > 0 && o.Rate > 0, "give --rate (requests/s on kept connections) or --connect-rate (connections/s), not both"},
		{o.ConnectRetries < 0, fmt.Sprintf("connect retries must not be negative, got %d (--connect-retries)", o.ConnectRetries)},
		{o.Duration < 0 || o.Warmup < 0 || o.Drain < 0, "durations must not be negative"},
		{badCPUs(o.CPUs), fmt.Sprintf("client CPUs %v: each must be 0..%d", o.CPUs, maxCPUs-1)},
		{o.Sizes.Min < 1 && len(o.Sizes.List) == 0, fmt.Sprintf("value size must be at least 1 byte, got %d (-d)", o.Sizes.Min)},
		{o.Sizes.Largest() > MaxValueSize, fmt.Sprintf("value size above 1 GiB: %d (-d)", o.Sizes.Largest())},
	}
	for _, c := range checks {
		if c.bad {
			return fmt.Errorf("%s", c.msg)
		}
	}
	return o.Keys.Validate()
}

func (o *Options) reconnectMax() int64 {
	if o.ReconnectMax > 0 {
		return int64(o.ReconnectMax)
	}
	return int64(DefaultReconnectMax)
}

func (o *Options) threads() int {
	t := max(o.Threads, 1)
	return min(t, o.Clients)
}

const maxCPUs = 1024 // unix.CPUSet's size

func badCPUs(cpus []int) bool {
	for _, c := range cpus {
		if c < 0 || c >= maxCPUs {
			return true
		}
	}
	return false
}
