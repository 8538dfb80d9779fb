package netns

import (
	"context"
	"fmt"
	"os"
	"strconv"
)

// NewStar creates a client namespace joined to n server namespaces, one
// veth pair each: a controller and the hosts of a fleet. Each Pair shares
// the Client; host i (from 1) is 10.78.i.1, the controller's end 10.78.i.2.
// Removing every Pair removes them all (the client goes with the first).
// On failure it removes what it made.
func NewStar(ctx context.Context, n int) ([]*Pair, error) {
	if n < 1 || n > 250 {
		return nil, fmt.Errorf("a star of %d hosts: want 1 to 250", n)
	}
	id := strconv.Itoa(os.Getpid())
	client := namePrefix + id + "-ctl"
	if err := ip(ctx, "netns", "add", client); err != nil {
		return nil, fmt.Errorf("set up network namespaces: %w", err)
	}
	var pairs []*Pair
	fail := func(err error) ([]*Pair, error) {
		for _, p := range pairs {
			p.Remove()
		}
		ip(context.Background(), "netns", "del", client)
		return nil, fmt.Errorf("set up network namespaces: %w", err)
	}
	if err := ip(ctx, "-n", client, "link", "set", "lo", "up"); err != nil {
		return fail(err)
	}
	for i := 1; i <= n; i++ {
		h := strconv.Itoa(i)
		p := &Pair{
			Server: namePrefix + id + "-h" + h, Client: client,
			ServerIf: "rl" + id + "h" + h + "s", ClientIf: "rl" + id + "h" + h + "c",
			ServerIP: "10.78." + h + ".1", ClientIP: "10.78." + h + ".2",
		}
		pairs = append(pairs, p)
		for _, s := range [][]string{
			{"netns", "add", p.Server},
			{"link", "add", p.ServerIf, "type", "veth", "peer", "name", p.ClientIf},
			{"link", "set", p.ServerIf, "netns", p.Server},
			{"link", "set", p.ClientIf, "netns", p.Client},
			{"-n", p.Server, "addr", "add", p.ServerIP + "/30", "dev", p.ServerIf},
			{"-n", p.Client, "addr", "add", p.ClientIP + "/30", "dev", p.ClientIf},
			{"-n", p.Server, "link", "set", "lo", "up"},
			{"-n", p.Server, "link", "set", p.ServerIf, "up"},
			{"-n", p.Client, "link", "set", p.ClientIf, "up"},
		} {
			if err := ip(ctx, s...); err != nil {
				return fail(err)
			}
		}
	}
	return pairs, nil
}
