package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"redline/internal/host"
	"redline/internal/redisadmin"
)

// GatherOptions says what to read for a run.
type GatherOptions struct {
	// Root is the host root: "/" for this machine, or a fixture tree.
	Root string
	// Redis, when set, is the server to check. It is only contacted when
	// Root is the live machine: a fixture tree has no server.
	Redis *redisadmin.Options
	// Pid overrides the server's INFO process_id (a server in another PID
	// namespace whose host pid is known); without a server (a fixture
	// tree) it chooses among the snapshot's redis-servers.
	Pid int
	// Sample, when positive, reads everything twice this far apart so
	// that counters (drops, overflows, rejected connections, migrations)
	// are judged by how much they rose rather than by totals since boot.
	Sample time.Duration
	// Host passes options to host.Read (extra IRQ patterns, ports).
	Host host.Options
	// NICsNotChecked, when set, is why the NICs are not read: /sys is not
	// the network namespace's the doctor runs in (host.NICsNotChecked).
	NICsNotChecked string

	Iface           string
	ExpectedClients int

	// Cluster says whether to treat the server as a Redis Cluster seed:
	// nil detects it (INFO cluster_enabled:1), true requires it, false
	// checks the one server only.
	Cluster *bool
	// ClusterAuthAny sends the seed's password to every node the seed
	// lists (--cluster-auth-any); otherwise only to the nodes
	// redisadmin.NodeGetsPassword accepts.
	ClusterAuthAny bool
}

// Gather reads the host and, when asked, the server, and returns the facts
// Run checks. A server that cannot be reached is an error; the caller
// decides whether to go on without it (see Facts.RedisNote).
func Gather(ctx context.Context, o GatherOptions) (*Facts, error) {
	if o.Root == "" {
		o.Root = "/"
	}
	fs, err := host.NewFS(o.Root)
	if err != nil {
		return nil, fmt.Errorf("host root %s: %w", o.Root, err)
	}
	if err := checkIface(fs, o.Iface); err != nil {
		return nil, err
	}
	f := &Facts{Iface: o.Iface, ExpectedClients: o.ExpectedClients}
	var conn *redisadmin.Conn
	switch {
	case o.Redis != nil && fs.Live():
		if conn, err = redisadmin.Dial(ctx, *o.Redis); err != nil {
			return nil, err
		}
		defer conn.Close()
	case o.Redis != nil:
		f.RedisNote = "--root reads a fixture tree, which has no server"
	default:
		f.RedisNote = "no server address given"
	}
	// The seed's INFO says whether it is a cluster node and, for a lone
	// server, is the first reading's: read once, passed along.
	var info *redisadmin.Info
	if conn != nil && (o.Cluster == nil || *o.Cluster) {
		if info, err = redisadmin.ReadInfo(ctx, conn); err != nil {
			return nil, err
		}
		switch {
		case info.ClusterEnabled():
			return gatherCluster(ctx, fs, conn, info, o, f)
		case o.Cluster != nil:
			return nil, fmt.Errorf("--cluster: %s is not a cluster node (INFO cluster_enabled is not 1); drop --cluster to check it as one server", conn.Addr())
		}
	}
	read := func() (*host.Snapshot, *redisadmin.Facts, error) {
		snap, rf, err := gatherOnce(ctx, fs, conn, info, o)
		if err == nil && o.NICsNotChecked != "" {
			host.NICsNotChecked(snap, o.NICsNotChecked)
		}
		info = nil // a second reading asks again
		return snap, rf, err
	}
	if f.Host, f.Redis, err = read(); err != nil {
		return nil, err
	}
	if conn == nil && o.Pid != 0 {
		f.Pid = o.Pid
		if f.RedisProcess() == nil {
			return nil, fmt.Errorf("no redis-server with pid %d on host %s (redline inspect lists the ones it found)", o.Pid, fs.Root())
		}
	}
	if o.Sample > 0 {
		if err := sleep(ctx, o.Sample); err != nil {
			return nil, err
		}
		f.Prev, f.PrevRedis = f.Host, f.Redis
		if f.Host, f.Redis, err = read(); err != nil {
			return nil, err
		}
		f.Interval = o.Sample
	}
	return f, nil
}

// gatherOnce reads the server (with info when it was just read) and the
// host.
func gatherOnce(ctx context.Context, fs *host.FS, conn *redisadmin.Conn, info *redisadmin.Info, o GatherOptions) (*host.Snapshot, *redisadmin.Facts, error) {
	var rf *redisadmin.Facts
	hopts := o.Host
	if conn != nil {
		var err error
		rf, err = redisadmin.Collect(ctx, conn, redisadmin.CollectOptions{Pid: o.Pid, Info: info})
		if err != nil {
			return nil, nil, err
		}
		if rf.Process.Local {
			hopts.PIDs = []int{rf.Process.Pid}
		}
	}
	snap, err := host.Read(fs, hopts)
	if err != nil {
		return nil, nil, fmt.Errorf("read host %s: %w", fs.Root(), err)
	}
	return snap, rf, nil
}

// checkIface refuses a NIC the host does not have: rules about "the NIC
// that carries Redis traffic" would otherwise check nothing and say ok.
func checkIface(fs *host.FS, iface string) error {
	if iface == "" {
		return nil
	}
	// A name, never a path: "../../etc" would otherwise test any file's
	// existence (and a session runs as root). The kernel's rule:
	// at most 15 bytes, no '/', no whitespace, not "." or "..".
	if len(iface) > 15 || iface == "." || iface == ".." || strings.ContainsAny(iface, "/ \t\n\r:\x00") {
		return fmt.Errorf("%q is not a network interface name (at most 15 characters, no '/', ':' or spaces; redline inspect lists the NICs)", iface)
	}
	if fs.Exists("/sys/class/net/" + iface) {
		return nil
	}
	var names []string
	ents, _ := fs.ReadDir("/sys/class/net")
	for _, e := range ents {
		names = append(names, e.Name)
	}
	return fmt.Errorf("NIC %q is not on host %s (its NICs: %s; redline inspect shows them)", iface, fs.Root(), orNone(strings.Join(names, ", ")))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
