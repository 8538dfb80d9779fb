package cli

import (
	"cmp"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"redline/internal/secret"
	"redline/internal/serverhost"
	"redline/internal/textsafe"
	"redline/internal/tune"
)

// tuneOptions are the flags the tune subcommands share.
type tuneOptions struct {
	stateDir string
	root     string
	redis    string
	port     int    // -p: --redis 127.0.0.1:PORT
	netns    string // --netns: the namespace the host is read and changed in
	user     string
	json     bool
	passFile string
	password string       // from --pass-file or REDISCLI_AUTH, read as the command starts
	given    secret.Given // the same, and whether --pass-file gave it
	remote   remoteOptions
	// stateDirNamed: --state-dir was given to a command that reads the
	// journal (readsJournal).
	stateDirNamed bool
}

func init() { register(newTuneCmd) }

func newTuneCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tune",
		Short: "Plan, apply, verify and roll back host and Redis changes behind a crash-safe journal",
		Long: `tune turns doctor findings and named profiles into a plan: a YAML or JSON file
you can read and edit. apply makes each change behind a journal (the old value is
on disk before anything is written, and every write is read back); rollback
restores from that journal, newest first, even after redline was killed or the
machine rebooted, and leaves alone any value someone else changed since.

  redline tune plan --profile irq-local,rps-xps -o plan.yaml
  redline tune apply plan.yaml --yes
  redline tune status
  redline tune rollback

The journal lives in --state-dir (default ` + tune.DefaultStateDir + `).
Redis passwords come from --pass-file or REDISCLI_AUTH, never from the plan or
the journal.
See docs/tune.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newTunePlanCmd(s), newTuneApplyCmd(s), newTunePersistCmd(s), newTuneStatusCmd(s), newTuneVerifyCmd(s), newTuneRollbackCmd(s))
	return cmd
}

func (o *tuneOptions) stateFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.stateDir, "state-dir", tune.DefaultStateDir, "directory of the journal")
	o.passFlag(cmd)
}

// readsJournal marks a command that reads the journal (rollback, status,
// verify without a plan): a --state-dir it names must exist on this
// machine (serverhost.LocalOptions.StateDirMustExist), so that a typo is
// not "nothing applied" and no directory is made.
func (o *tuneOptions) readsJournal(cmd *cobra.Command) {
	o.stateDirNamed = cmd.Flags().Changed("state-dir")
}

// passFlag defines --pass-file (once per command) and reads the password
// before the command runs.
func (o *tuneOptions) passFlag(cmd *cobra.Command) {
	if cmd.Flags().Lookup("pass-file") != nil {
		return
	}
	cmd.Flags().StringVar(&o.passFile, "pass-file", "", "read the Redis password from the first line of `FILE` (default: $REDISCLI_AUTH)")
	cmd.PreRunE = func(*cobra.Command, []string) error {
		g, err := secret.CommandPassword("", o.passFile)
		if err != nil {
			return usageError("redline tune: --pass-file: %v", err)
		}
		o.given, o.password = g, g.Value
		return nil
	}
}

func (o *tuneOptions) hostFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.root, "root", "/", "host root: / for this machine, or a copy of a fixture tree to rehearse on (kernel write rules simulated)")
	f.StringVar(&o.redis, "redis", "", "Redis server for redis-config changes: HOST:PORT or a unix socket path (overrides the plan's); it also picks the redis-server the profiles plan for")
	f.IntVarP(&o.port, "port", "p", 0, "the Redis server at 127.0.0.1:`PORT` (as --redis)")
	netnsFlag(cmd, &o.netns)
	f.StringVar(&o.user, "user", "", "Redis ACL user (the password comes from --pass-file or REDISCLI_AUTH)")
	o.passFlag(cmd)
}

// local is this machine as the command describes it (a rehearsal tree
// with --root), its journal in --state-dir.
func (o *tuneOptions) local() serverhost.LocalOptions {
	return serverhost.LocalOptions{Root: o.root, StateDir: o.stateDir, StateDirMustExist: o.stateDirNamed, NetNS: o.netns}
}

// redisFor is the server a plan's redis-config changes go to, with
// the password (which travels only inside a session): --redis, else the
// plan's when there is a password to give it; nil for the plan's own.
// A plan is a file: its redis.addr and its changes' nodes get the
// password only as secret.Given.ForFileAddress decides for each (else
// none of them does), and why it was withheld goes to warn.
func (o *tuneOptions) redisFor(p *tune.Plan, warn io.Writer) *serverhost.RedisTarget {
	pw := o.password
	for _, a := range planAddrs(p, o.redis) {
		if got, withheld := o.given.ForFileAddress(a.network, a.addr); withheld != "" {
			fmt.Fprintf(warn, "redline tune: %s\n", textsafe.Printable(withheld))
			pw = got
			break
		}
	}
	switch {
	case o.redis != "":
		r := tuneRedisOptions(o.redis, o.user)
		return &serverhost.RedisTarget{Network: r.Network, Addr: r.Addr, User: r.User, Password: pw}
	case p != nil && p.Redis != nil && pw != "":
		return &serverhost.RedisTarget{Network: p.Redis.Network, Addr: p.Redis.Addr, User: p.Redis.User, Password: pw}
	}
	return nil
}

type netAddr struct{ network, addr string }

// planAddrs are the addresses the plan names that the command line did
// not (cmdline, --redis): its redis.addr and its changes' nodes.
func planAddrs(p *tune.Plan, cmdline string) []netAddr {
	if p == nil {
		return nil
	}
	var out []netAddr
	if cmdline == "" && p.Redis != nil && p.Redis.Addr != "" {
		out = append(out, netAddr{cmp.Or(p.Redis.Network, "tcp"), p.Redis.Addr})
	}
	for _, c := range p.Changes {
		if c.Node != "" && c.Node != cmdline && !slices.Contains(out, netAddr{"tcp", c.Node}) {
			out = append(out, netAddr{"tcp", c.Node})
		}
	}
	return out
}

func tuneRedisOptions(addr, user string) tune.RedisOptions {
	r := tune.RedisOptions{Network: "tcp", Addr: addr, User: user}
	if strings.HasPrefix(addr, "/") {
		r.Network = "unix"
	}
	return r
}

// checkRoot checks --root, --netns and -p (which becomes --redis).
func (o *tuneOptions) checkRoot() error {
	if err := checkNetNS("tune", o.netns, o.remote); err != nil {
		return err
	}
	if o.port != 0 {
		if o.redis != "" {
			return usageError("redline tune: give one of -p PORT and --redis HOST:PORT")
		}
		if o.port < 0 || o.port > 65535 {
			return usageError("redline tune: -p %d: want a port, 1-65535", o.port)
		}
		o.redis = net.JoinHostPort("127.0.0.1", strconv.Itoa(o.port))
	}
	if o.root == "/" || o.root == "" {
		return nil
	}
	if st, err := os.Stat(o.root); err != nil || !st.IsDir() {
		return usageError("redline tune: --root %s is not a directory holding proc/ and sys/", o.root)
	}
	return nil
}
