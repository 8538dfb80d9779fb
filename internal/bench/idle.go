package bench

import (
	"context"
	"fmt"
	"net"
	"time"

	"redline/internal/netns"
)

// Idle opens n connections (after AUTH/SELECT as configured) and holds them
// until ctx is done, calling report with the number still open every
// 250 ms. It is redis-benchmark's -I.
func Idle(ctx context.Context, o Options, report func(open int)) error {
	dial := netns.Dialer(o.NetNS)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range o.Clients {
		dctx, cancel := context.WithTimeout(ctx, o.Timeout)
		c, err := dial(dctx, o.Network, o.Addr)
		cancel()
		if err != nil {
			return fmt.Errorf("Could not connect to Redis at %s: %s (%d connections open)", o.Addr, capitalise(rootCause(err)), len(conns))
		}
		conns = append(conns, c)
	}
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			report(len(conns))
		}
	}
}
