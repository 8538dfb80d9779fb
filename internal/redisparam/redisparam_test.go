package redisparam

import (
	"strings"
	"testing"
)

// The parameters issue 24 (item 3) names as ways a shared plan or a
// scenario opens a server, writes a file or loads code: all refused,
// whatever their case.
func TestCheckRefusesWhatOpensOrWrites(t *testing.T) {
	for _, name := range []string{
		"requirepass", "masterauth", "bind", "protected-mode", "dir", "dbfilename", "PROTECTED-MODE",
		"cluster-announce-ip", "replica-announce-ip", "enable-debug-command", "enable-module-command",
		"rename-command", "include", "loadmodule", "logfile", "replicaof", "aclfile", "unixsocket",
		"unixsocketperm", "tls-key-file", "port", "notify-keyspace-events",
	} {
		if err := Check(name); err == nil {
			t.Errorf("Check(%q) = nil", name)
		} else if !strings.Contains(err.Error(), name) {
			t.Errorf("Check(%q) = %v: does not name the parameter", name, err)
		}
	}
}

func TestCheckAcceptsPerformanceSettings(t *testing.T) {
	for _, name := range []string{"hz", "maxmemory", "io-threads", "Lazyfree-Lazy-Eviction", "appendfsync", "client-output-buffer-limit", "slowlog-max-len"} {
		if err := Check(name); err != nil {
			t.Errorf("Check(%q) = %v", name, err)
		}
	}
}
