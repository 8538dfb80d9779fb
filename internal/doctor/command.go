package doctor

import (
	"fmt"
	"net"
	"strings"

	"redline/internal/change"
	"redline/internal/shellwords"
)

// Command returns the shell command that makes change c by hand, the
// equivalent of what `redline tune apply` does for it. redisAddr
// ("host:port" or a socket path) is used for redis-config changes.
func Command(c change.Change, redisAddr string) string {
	if f, ok := commandFormats[c.Kind]; ok {
		return f(c, redisAddr)
	}
	return fmt.Sprintf("# %s %s = %s", c.Kind, c.Target, c.Value)
}

// UndoCommand is the manual undo of one change: Command with the value
// the rule read, or, when it read none (the file is absent from a
// fixture tree or a capture, or could not be read), a comment saying to
// note the value before applying, never a command that writes an empty
// value (which the kernel refuses for an IRQ's affinity, sysctl for
// vm.nr_hugepages). A Redis setting (save) and the sysctls of
// emptySysctls can read empty: for them empty is a value.
func UndoCommand(c change.Change, redisAddr string) string {
	if c.Value == "" && c.Kind != change.KindRedisConfig && !(c.Kind == change.KindSysctl && emptySysctls[c.Target]) {
		return fmt.Sprintf("# %s: its value before the fix was not read here: note it before applying", c.Target)
	}
	return Command(c, redisAddr)
}

// emptySysctls are the sysctls doctor fixes whose value reads empty when
// unset (a list of ports or ranges).
var emptySysctls = map[string]bool{"net.ipv4.ip_local_reserved_ports": true}

var commandFormats = map[change.Kind]func(change.Change, string) string{
	change.KindSysctl: func(c change.Change, _ string) string {
		return fmt.Sprintf("sysctl -w %s=%s", c.Target, shellwords.Quote(c.Value))
	},
	change.KindFile: func(c change.Change, _ string) string {
		return fmt.Sprintf("echo %s > %s", shellwords.Quote(c.Value), c.Target)
	},
	change.KindRedisConfig: func(c change.Change, addr string) string {
		if c.Node != "" {
			addr = c.Node
		}
		return fmt.Sprintf("redis-cli %sCONFIG SET %s %s", redisCLIArgs(addr), c.Target, shellwords.Quote(c.Value))
	},
	change.KindAffinity: func(c change.Change, _ string) string {
		return fmt.Sprintf("taskset -a -p -c %s %s", c.Value, c.Target)
	},
	change.KindService: func(c change.Change, _ string) string {
		if c.Value == "active" {
			return "systemctl start " + c.Target
		}
		return "systemctl stop " + c.Target
	},
	change.KindChannels: func(c change.Change, _ string) string {
		return fmt.Sprintf("ethtool -L %s combined %s", c.Target, c.Value)
	},
}

// redisCLIArgs returns "-h H -p P " (or "-s PATH ") for redis-cli.
func redisCLIArgs(addr string) string {
	if addr == "" {
		return ""
	}
	if strings.HasPrefix(addr, "/") {
		return "-s " + addr + " "
	}
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("-h %s -p %s ", h, p)
}
