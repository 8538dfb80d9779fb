// Package policy holds the decisions a target makes once, for the lab
// and autotune alike: the address a server redline starts binds to,
// when such a server gets a password of its own, the room it leaves for
// clients (maxclients), how a managed cluster's allocator is checked,
// and the production-host guard (which changes are host-wide, which
// redis-servers it protects, the decision in one line). A leaf: it
// links no server host, doctor or tune.
package policy

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"redline/internal/change"
	"redline/internal/host"
	"redline/internal/redisserver"
	"redline/internal/secret"
)

// MaxClients is the first redis.conf line of every server redline starts
// (the lab's servers had it, autotune's had not: the lab's rule won, so a
// workload of many connections is measured, not refused; a scenario's or
// --server-config's own maxclients line comes after it and wins).
const MaxClients = "maxclients 10000"

// StartConfig is a managed server's redis.conf lines: MaxClients, then
// lines.
func StartConfig(lines []string) []string {
	return append([]string{MaxClients}, lines...)
}

// Password is the password of a server redline starts: given, else, when
// the load reaches it from another host (a server host over ssh), a
// fresh one of its own (never protected-mode off, never no password on
// a network address); "" for a server on this machine or in a namespace
// of it.
func Password(remote bool, given string) string {
	if remote && given == "" {
		return secret.NewPassword()
	}
	return given
}

// Bind is the address a server redline starts listens on: the server
// side of a network namespace pair (netnsIP); on a server host over ssh
// (sshHost), the address the caller gives (the lab's target.address)
// else the one the ssh connection reached (sshIP, from the session's
// $SSH_CONNECTION), never every interface; "" on this machine
// (loopback, redisserver's default). how says how to give an address.
func Bind(netnsIP, sshHost, sshIP, given, how string) (string, error) {
	switch {
	case netnsIP != "":
		return netnsIP, nil
	case sshHost == "":
		return "", nil
	case given != "":
		return given, nil
	case sshIP != "":
		return sshIP, nil
	}
	return "", fmt.Errorf("the session on %s cannot tell the address the load reaches (no $SSH_CONNECTION): %s", sshHost, how)
}

// HostWide reports whether c reaches beyond the server: a sysctl outside
// the server's network namespace (serverNetNS, "" for the host's), THP,
// an IRQ's affinity, a CPU's frequency, a service, a NIC of the host. A
// Redis setting and the server's own CPU affinity stay with the server.
func HostWide(c change.Change, serverNetNS string) bool {
	inNS := serverNetNS != ""
	switch c.Kind {
	case change.KindSysctl:
		return !inNS || !strings.HasPrefix(c.Target, "net.")
	case change.KindFile:
		return !inNS || !strings.HasPrefix(c.Target, "/sys/class/net/")
	case change.KindChannels:
		return !inNS
	case change.KindService:
		return true
	}
	return false
}

// OtherServers lists the redis-servers already running under root, as
// "pid N" each: taken before a run (the lab, autotune) starts its own,
// they are what Guard protects.
func OtherServers(root string) []string {
	var out []string
	entries, _ := os.ReadDir(filepath.Join(root, "proc"))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, "proc", e.Name(), "comm"))
		if err == nil && slices.Contains(host.DefaultRedisComms, strings.TrimSpace(string(b))) {
			out = append(out, "pid "+strconv.Itoa(pid))
		}
	}
	return out
}

// Guard is the production-host guard. On a server host over ssh (sshHost
// true) host-wide changes are allowed: they are made on that host, whose
// other servers who (the lab, autotune) does not see. On this host, with
// other redis-servers running (others, OtherServers taken before the run
// started its own) host-wide changes are left out unless the user allowed
// them (how says how: a flag, a scenario key). off says to leave them
// out; line says the decision in one line, without (what a refusal
// leaves out) included.
func Guard(sshHost bool, who string, others []string, allowed bool, without, how string) (off bool, line string) {
	n := len(others)
	switch {
	case sshHost:
		return false, "host-wide changes allowed: they are made on the ssh target's host, whose other servers " + who + " does not see"
	case n == 0:
		return false, "host-wide changes allowed: no other redis-server runs on this host"
	case allowed:
		return false, fmt.Sprintf("host-wide changes ALLOWED by %s although %d other redis-server(s) run on this host (%s): they see every flip", how, n, strings.Join(others, ", "))
	}
	return true, fmt.Sprintf("host-wide changes refused: %d other redis-server(s) run on this host (%s); %s (allow with %s)", n, strings.Join(others, ", "), without, how)
}

// StartCluster starts a Redis Cluster (co, every node with co.Server) and
// checks every node runs with spec's allocator, as a single server is
// checked. The lab refused allocator variants on a cluster (its check
// took one pid), autotune checked each node: autotune's rule won, so an
// allocator is compared on a cluster too, and a node that did not map it
// stops the start.
func StartCluster(ctx context.Context, co redisserver.ClusterOptions, spec redisserver.Spec) (*redisserver.Cluster, error) {
	started, err := redisserver.StartCluster(ctx, co)
	if err != nil {
		return nil, err
	}
	for _, n := range started.Nodes() {
		if err := redisserver.CheckAllocator(n.Pid(), spec); err != nil {
			started.Stop()
			return nil, fmt.Errorf("node %s: %w", n.Addr(), err)
		}
	}
	return started, nil
}
