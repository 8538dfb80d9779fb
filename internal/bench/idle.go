package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"redline/internal/netns"
)

// Idle opens n connections and holds them until ctx is done, calling
// report with the number open every 250 ms. It is redis-benchmark's -I,
// which sends nothing but reads each connection: what a server says on an
// idle connection is an error (a server at maxclients answers the connect
// with "-ERR max number of clients reached" and closes it), and the first
// ends the run as it ends redis-benchmark's, with "Error from server: ...".
func Idle(ctx context.Context, o Options, report func(open int)) error {
	dial := netns.Dialer(o.NetNS)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	failed := make(chan error, o.Clients)
	for range o.Clients {
		dctx, cancel := context.WithTimeout(ctx, o.Timeout)
		c, err := dial(dctx, o.Network, o.Addr)
		cancel()
		if err != nil {
			return fmt.Errorf("Could not connect to Redis at %s: %s (%d connections open)", o.Addr, capitalise(rootCause(err)), len(conns))
		}
		conns = append(conns, c)
		go func() { failed <- idleRead(c) }()
	}
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-failed:
			if ctx.Err() != nil {
				return nil
			}
			return err
		case <-t.C:
			report(len(conns))
		}
	}
}

// idleRead waits for what the server sends on an idle connection and
// returns it as redis-benchmark words it: an error reply, or the close.
func idleRead(c net.Conn) error {
	line, err := bufio.NewReader(c).ReadString('\n')
	switch {
	case strings.HasPrefix(line, "-"):
		return fmt.Errorf("Error from server: %s", strings.TrimRight(line[1:], "\r\n"))
	case err == nil:
		return fmt.Errorf("Error: unexpected reply on an idle connection: %q", strings.TrimRight(line, "\r\n"))
	case errors.Is(err, net.ErrClosed):
		return nil // closed here, at the end
	default:
		return errors.New("Error: Server closed the connection")
	}
}
