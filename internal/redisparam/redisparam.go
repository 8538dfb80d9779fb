// Package redisparam is the one allow-list of Redis parameters redline
// sets on a server it does not own the security of: a plan's redis-config
// changes (CONFIG SET, persisted by CONFIG REWRITE) and the redis.conf
// directives of a server a session or a lab starts. Both may come from a
// file someone else wrote, and redline may run as root, so the list holds
// performance settings only. Parameters that open the server to others
// (bind, protected-mode, requirepass, masterauth, the *-announce-*
// addresses, enable-* commands, rename-command), name files or code (dir,
// dbfilename, include, loadmodule, logfile, aclfile, unixsocket ...) or
// send data elsewhere (replicaof) are not on it, and Check names why.
package redisparam

import (
	"fmt"
	"regexp"
	"strings"

	"redline/internal/secret"
)

// performance are the parameters redline sets: memory and eviction,
// persistence cadence, threads and CPU lists, event-loop frequency,
// lazy freeing, latency and slow-log instrumentation, encodings, buffers.
var performance = set(
	"io-threads", "io-threads-do-reads", "maxclients", "databases",
	"maxmemory", "maxmemory-policy", "maxmemory-samples", "maxmemory-eviction-tenacity",
	"hz", "dynamic-hz", "active-expire-effort", "tcp-backlog", "tcp-keepalive", "timeout",
	"save", "appendonly", "appendfsync", "no-appendfsync-on-rewrite", "aof-use-rdb-preamble",
	"auto-aof-rewrite-percentage", "auto-aof-rewrite-min-size", "rdbcompression", "rdbchecksum",
	"activedefrag", "active-defrag-cycle-min", "active-defrag-cycle-max", "active-defrag-ignore-bytes",
	"active-defrag-threshold-lower", "active-defrag-threshold-upper", "active-defrag-max-scan-fields",
	"activerehashing", "disable-thp", "jemalloc-bg-thread",
	"lazyfree-lazy-eviction", "lazyfree-lazy-expire", "lazyfree-lazy-server-del",
	"lazyfree-lazy-user-del", "lazyfree-lazy-user-flush", "replica-lazy-flush", "slave-lazy-flush",
	"latency-monitor-threshold", "latency-tracking", "slowlog-log-slower-than", "slowlog-max-len",
	"server-cpulist", "bio-cpulist", "aof-rewrite-cpulist", "bgsave-cpulist",
	"client-output-buffer-limit", "repl-backlog-size", "client-query-buffer-limit",
	"hash-max-listpack-entries", "hash-max-listpack-value", "hash-max-ziplist-entries", "hash-max-ziplist-value",
	"zset-max-listpack-entries", "zset-max-listpack-value", "zset-max-ziplist-entries", "zset-max-ziplist-value",
	"set-max-intset-entries", "set-max-listpack-entries", "set-max-listpack-value",
	"list-max-listpack-size", "list-max-ziplist-size", "list-compress-depth",
	"stream-node-max-bytes", "stream-node-max-entries",
)

// denied says why the parameters people most often try are refused; any
// other parameter off the list gets the general message.
var denied = []struct{ match, why string }{
	{"requirepass", "a password"}, {"masterauth", "a password"}, {"masteruser", "a replication user"},
	{"bind", "opens the server to other networks"}, {"protected-mode", "opens the server to other networks"},
	{"port", "the server's address is redline's to choose"}, {"replicaof", "sends the data to another server"},
	{"slaveof", "sends the data to another server"}, {"rename-command", "changes what commands do"},
	{"dir", "names a directory the server writes"}, {"dbfilename", "names a file the server writes"},
	{"appendfilename", "names a file the server writes"}, {"appenddirname", "names a directory the server writes"},
	{"logfile", "names a file the server writes"}, {"pidfile", "names a file the server writes"},
	{"include", "reads another file"}, {"loadmodule", "loads code"}, {"aclfile", "names a file of users"},
	{"unixsocket", "names a file the server creates"}, {"user", "an ACL user"},
}

// denied patterns: any announce address, any enable-* command switch, TLS.
var deniedPattern = []struct {
	prefix, contains, why string
}{
	{contains: "-announce-", why: "an address others are told to use"},
	{prefix: "enable-", why: "enables commands (DEBUG, MODULE, protected configs)"},
	{prefix: "tls-", why: "names key files"},
}

// Check returns nil when redline may set the parameter name (as CONFIG
// SET or a redis.conf directive), or an error that says why not.
func Check(name string) error {
	n := strings.ToLower(name)
	if performance[n] {
		return nil
	}
	why := ""
	for _, d := range denied {
		if n == d.match {
			why = d.why
		}
	}
	for _, d := range deniedPattern {
		if (d.prefix != "" && strings.HasPrefix(n, d.prefix)) || (d.contains != "" && strings.Contains(n, d.contains)) {
			why = d.why
		}
	}
	if why != "" {
		return fmt.Errorf("redis parameter %q is refused: %s (redline sets performance settings only, internal/redisparam)", name, why)
	}
	return fmt.Errorf("redis parameter %q is not one redline sets (performance settings only: memory, persistence cadence, threads, hz, lazy freeing, latency monitoring, encodings; internal/redisparam)", name)
}

// lineValue are the characters a directive's value may hold: no quoting
// tricks, no second directive.
var lineValue = regexp.MustCompile(`^[A-Za-z0-9 ._,:"-]*$`)

// CheckLine returns nil when redline may write the redis.conf line (a
// directive Check allows, a plain value), or an error naming the line.
// The session holds a started server's lines to it, and the lab a
// scenario's server.config unless the user trusts the scenario.
func CheckLine(line string) error {
	name, value, _ := strings.Cut(strings.TrimSpace(line), " ")
	// The refused line is quoted into result.json and report.md: its
	// password (requirepass PW) is redacted, as on every command line.
	shown := secret.RedactLine(line)
	if err := Check(name); err != nil {
		return fmt.Errorf("config %q: %w", shown, err)
	}
	if !lineValue.MatchString(value) {
		return fmt.Errorf("config %q: the value has characters redline does not write into redis.conf", shown)
	}
	return nil
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
