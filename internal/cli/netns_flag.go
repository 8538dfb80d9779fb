package cli

import (
	"os"

	"github.com/spf13/cobra"

	"redline/internal/netns"
)

// netnsFlag defines --netns: the network namespace a command reads the
// host and reaches Redis from, for a server in a container or an ip netns
// of its own (doctor and inspect name such servers with the value to give).
func netnsFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "netns", "", "run inside this network namespace (`NETNS`: a name of ip netns, or a path such as /proc/PID/ns/net) to reach a server there")
}

// checkNetNS refuses a --netns that names no namespace, or one given with
// --ssh (a session host is entered as it is).
func checkNetNS(name, ns string, r remoteOptions) error {
	if ns == "" {
		return nil
	}
	if r.target != "" {
		return usageError("redline %s: --netns is for this machine; on the --ssh host run redline inside the namespace", name)
	}
	if _, err := os.Stat(netns.Path(ns)); err != nil {
		return usageError("redline %s: --netns %s: no such network namespace (ip netns list names them; /proc/PID/ns/net is a process's)", name, ns)
	}
	return nil
}
