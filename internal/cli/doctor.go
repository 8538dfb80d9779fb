package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"redline/internal/doctor"
	_ "redline/internal/doctor/rules" // registers the rules
	"redline/internal/redisadmin"
	"redline/internal/secret"
	"redline/internal/serverhost"
)

// doctorOptions are redline doctor's flags.
type doctorOptions struct {
	root               string
	host               string
	port               int
	socket             string
	user, password     string
	passFile           string
	noRedis            bool
	pid                int
	iface              string
	irqPatterns        []string
	clients            int
	sample             time.Duration
	intrinsic          time.Duration
	timeout            time.Duration
	only, skip         []string
	minSeverity        string
	failOn             string
	json, markdown     bool
	format, output     string
	verbose, list      bool
	redisExplicitlySet bool
	cluster            bool
	clusterSet         bool
	clusterAuthAny     bool
	netns              string
	remote             remoteOptions
}

// clusterMode is --cluster for doctor.GatherOptions: nil (detect) unless
// the flag was given.
func (o *doctorOptions) clusterMode() *bool {
	if !o.clusterSet {
		return nil
	}
	v := o.cluster
	return &v
}

func init() { register(newDoctorCmd) }

func newDoctorCmd(s *streams) *cobra.Command {
	o := &doctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Find what is wrong with this host and its Redis server, with evidence and reversible fixes",
		Long: `doctor checks the host (NUMA, NIC queues and IRQs, RPS/XPS, sysctls in the
server's network namespace, THP, memory, cgroup limits) and the server (INFO,
CONFIG, LATENCY LATEST, its start-up warnings) against the rules in
docs/doctor.md. Each finding shows the values it read and where from, the exact
commands that fix it and undo the fix. doctor never changes anything.

A Redis Cluster node (INFO cluster_enabled:1) is checked as a cluster: doctor
reads every node the topology names, runs the server rules on each node
(labelled with its address, role and shard), the host rules once, and the
cluster rules (unserved slots, uneven slots or keys, a node with other
settings, a primary without a replica). --cluster=false checks the one node.

The report is brief: findings first, two lines each, then (with several
redis-servers) the servers found and what was judged for each, then one line
counting the rules not checked or not applicable, reasons grouped. --verbose
adds each finding's evidence, undo and persistence and lists every rule;
--json has everything.

Exit status: 0 when no shown finding is at or above --fail-on (default low:
an INFO finding never fails by default), 1 when one is, 2 when doctor could
not run, or a rule errored or a host file did not parse (the report lists the
errors).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.redisExplicitlySet = cmd.Flags().Changed("host") || cmd.Flags().Changed("port") || cmd.Flags().Changed("socket")
			o.clusterSet = cmd.Flags().Changed("cluster")
			return runDoctor(cmd.Context(), s, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.root, "root", "/", "host root to read: / for this machine, or a fixture tree (then no server is checked)")
	f.StringVar(&o.host, "host", "127.0.0.1", "Redis host")
	f.IntVarP(&o.port, "port", "p", 6379, "Redis port")
	f.StringVarP(&o.socket, "socket", "s", "", "Redis unix socket (overrides --host/--port)")
	f.StringVar(&o.user, "user", "", "Redis ACL user")
	f.StringVarP(&o.password, "pass", "a", "", "Redis password (visible in ps: prefer --pass-file or REDISCLI_AUTH)")
	f.StringVar(&o.passFile, "pass-file", "", "read the Redis password from the first line of `FILE`")
	f.BoolVar(&o.noRedis, "no-redis", false, "check the host only")
	f.BoolVar(&o.cluster, "cluster", false, "the server is a Redis Cluster seed: check every node and the cluster (default: detected from INFO cluster_enabled; --cluster=false checks the one node)")
	f.BoolVar(&o.clusterAuthAny, "cluster-auth-any", false, "with a cluster: send the password to every node the seed lists, not only to those on its host or network")
	f.IntVar(&o.pid, "pid", 0, "the server's pid on this host (when it runs in another PID namespace)")
	f.StringVar(&o.iface, "nic", "", "the NIC that carries Redis traffic (default: every physical NIC that is up)")
	alias(f, "iface", "nic")
	f.StringArrayVar(&o.irqPatterns, "irq-pattern", nil, "extra queue-IRQ naming rule, oeAware style: 'REGEXP:VAR_ETH_qpVAR_QUEUE' (repeatable; as redline inspect)")
	f.IntVar(&o.clients, "clients", 0, "peak number of clients expected to connect at once (checks backlogs against it)")
	f.DurationVar(&o.sample, "sample", 0, "read twice this far apart and judge counters by how much they rose (e.g. 5s)")
	f.DurationVar(&o.intrinsic, "intrinsic-latency", 0, "measure this host's intrinsic latency for this long (saturates one core)")
	f.DurationVar(&o.timeout, "timeout", redisadmin.DefaultTimeout, "deadline for connecting to Redis and for each command")
	f.StringSliceVar(&o.only, "rule", nil, "run only these rules (IDs or patterns such as 'tcp-*'; repeatable)")
	f.StringSliceVar(&o.skip, "no-rule", nil, "skip these rules (IDs or patterns; repeatable)")
	f.StringVar(&o.minSeverity, "min-severity", "info", "show findings at or above: info, low, medium, high")
	f.StringVar(&o.failOn, "fail-on", "low", "exit 1 when a shown finding is at or above: info, low, medium, high, or never")
	f.BoolVar(&o.json, "json", false, "write the report as JSON")
	f.BoolVar(&o.markdown, "markdown", false, "write the report as Markdown")
	f.StringVar(&o.format, "format", "", "prom: write the findings as a node_exporter textfile (docs/fleet.md)")
	f.StringVarP(&o.output, "output", "o", "", "write the report to `FILE` (atomically: a textfile collector never reads half of it)")
	f.BoolVar(&o.verbose, "verbose", false, "also list the rules that passed")
	aliasShort(f, "v", "verbose") // -v is the version elsewhere
	f.BoolVar(&o.list, "list", false, "list the rules and exit")
	netnsFlag(cmd, &o.netns)
	o.remote.flags(cmd)
	return cmd
}

func runDoctor(ctx context.Context, s *streams, o *doctorOptions) error {
	min, err := doctor.ParseSeverity(o.minSeverity)
	if err != nil {
		return usageError("redline doctor: --min-severity: %v", err)
	}
	failOn, fail, err := parseFailOn(o.failOn)
	if err != nil {
		return usageError("redline doctor: --fail-on: %v", err)
	}
	if o.json && o.markdown {
		return usageError("redline doctor: choose one of --json and --markdown")
	}
	if err := checkDoctorFormat(o); err != nil {
		return err
	}
	if err := checkOutputs("doctor", fileOutput("-o", o.output)); err != nil {
		return err
	}
	if err := checkNetNS("doctor", o.netns, o.remote); err != nil {
		return err
	}
	if o.clusterSet && o.cluster && (o.noRedis || o.root != "/") {
		return usageError("redline doctor: --cluster needs a live server: drop --no-redis and --root")
	}
	if o.list {
		return listRules(s.out)
	}
	if _, err := doctor.Select(doctor.Options{Only: o.only, Skip: o.skip}); err != nil {
		return usageError("redline doctor: %v", err)
	}
	if o.password, err = secret.Resolve(o.password, o.passFile, secret.FromEnv()); err != nil {
		return usageError("redline doctor: --pass-file: %v", err)
	}
	if err := validateIRQPatterns(o.irqPatterns); err != nil {
		return usageError("redline doctor: --irq-pattern: %v", err)
	}
	rep, where, err := doctorReport(ctx, s, o)
	if err != nil && ctx.Err() != nil {
		return exitCode(ExitSignaled, fmt.Sprintf("redline doctor: stopped by %s before the report was complete; nothing written", stoppedWhat(ctx)))
	}
	if err != nil {
		return failed("doctor", ExitError, err)
	}
	if err := writeDoctorOutput(s.out, rep, o, min, where.Name()); err != nil {
		return exitCode(ExitError, "redline doctor: write the report: "+err.Error())
	}
	if rep.HasErrors() {
		return exitCode(ExitError, "redline doctor: the report is incomplete: see its errors")
	}
	if fail && len(rep.Fired(max(min, failOn))) > 0 {
		return exitCode(ExitFailure, "")
	}
	return nil
}

// parseFailOn reads --fail-on: a severity, or never (fail false).
func parseFailOn(v string) (doctor.Severity, bool, error) {
	if v == "never" {
		return doctor.High, false, nil
	}
	sev, err := doctor.ParseSeverity(v)
	if err != nil {
		return sev, false, fmt.Errorf("%w, or never", err)
	}
	return sev, true, nil
}

// doctorReport runs the rules on the host (this machine, or --ssh's).
// With the server at the default address (nobody named it, nor asked for
// a cluster) unreachable, the doctor checks the host alone and says why.
// The Info says which host it was.
func doctorReport(ctx context.Context, s *streams, o *doctorOptions) (*doctor.Report, serverhost.Info, error) {
	h, err := o.remote.openHost(ctx, s, "doctor", serverhost.LocalOptions{Root: o.root, NetNS: o.netns})
	if err != nil {
		return nil, serverhost.Info{}, err
	}
	defer closeHost(s, "doctor", h)
	a := serverhost.DoctorArgs{Pid: o.pid, Iface: o.iface, Clients: o.clients, Sample: o.sample, Only: o.only, Skip: o.skip, IRQPatterns: o.irqPatterns,
		Cluster: o.clusterMode(), ClusterAuthAny: o.clusterAuthAny, HostOnlyFallback: !o.redisExplicitlySet && !o.clusterSet, Timeout: o.timeout, Intrinsic: o.intrinsic}
	if !o.noRedis {
		a.Redis = &serverhost.RedisTarget{Addr: net.JoinHostPort(o.host, strconv.Itoa(o.port)), User: o.user, Password: o.password}
		if o.socket != "" {
			a.Redis.Network, a.Redis.Addr = "unix", o.socket
		}
	}
	rep, err := h.Doctor(ctx, a)
	if rep != nil && rep.Target.RedisError != "" {
		fmt.Fprintf(s.err, "redline doctor: %s; checking the host only\n", fallbackWhy(rep, a.Redis.Addr))
	}
	return rep, h.Info(), err
}

// fallbackWhy says why the server at the default address was not checked:
// the dial's error when no redis-server was found, else that none of those
// found is at that address and how to pick one (a "connection refused"
// after listing servers reads as if they were down).
func fallbackWhy(rep *doctor.Report, addr string) string {
	if len(rep.Servers) == 0 || !strings.HasPrefix(rep.Target.RedisError, "connect to Redis at") {
		return rep.Target.RedisError // none found, or one answered (an auth failure says how to give the password)
	}
	how := "pick one with -p PORT"
	for _, sv := range rep.Servers {
		if sv.NetNS != "" {
			how += ", or --netns NETNS -p PORT for one in another network namespace"
			break
		}
	}
	return fmt.Sprintf("no server at the default address %s (%d redis-server(s) found: %s)", addr, len(rep.Servers), how)
}

func writeDoctorReport(w io.Writer, rep *doctor.Report, o *doctorOptions, min doctor.Severity) error {
	ro := doctor.RenderOptions{MinSeverity: min, Verbose: o.verbose}
	switch {
	case o.json:
		return doctor.WriteJSON(w, rep)
	case o.markdown:
		return doctor.WriteMarkdown(w, rep, ro)
	}
	return doctor.WriteText(w, rep, ro)
}

func listRules(w io.Writer) error {
	for _, r := range doctor.Rules() {
		if _, err := fmt.Fprintf(w, "%-26s %-7s %-13s %s\n", r.ID, r.Severity, r.Section, r.Title); err != nil {
			return err
		}
	}
	return nil
}
