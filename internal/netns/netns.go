// Package netns runs code inside a named network namespace (as made by
// "ip netns add NAME", /run/netns/NAME) and manages the namespaces and veth
// links of the lab's two-host topology.
package netns

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// Dir is where iproute2 keeps named namespaces.
const Dir = "/run/netns"

// Path returns the namespace file of name; a name with a slash is a path.
func Path(name string) string {
	if strings.Contains(name, "/") {
		return name
	}
	return filepath.Join(Dir, name)
}

// Do runs fn on an OS thread that has entered namespace name, then moves
// the thread back. Sockets fn creates belong to the namespace and can be
// used from any goroutine afterwards. If the thread cannot be moved back it
// is never handed to another goroutine: it ends with this one.
func Do(name string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		restore, err := Enter(name)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		err = fn()
		if restore() == nil {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}

// Enter moves the calling OS thread, which the caller has locked, into
// namespace name, and returns a function that moves it back. Unlock the
// thread only if that function succeeds.
func Enter(name string) (restore func() error, err error) {
	orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("current network namespace: %w", err)
	}
	fd, err := unix.Open(Path(name), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(orig)
		return nil, fmt.Errorf("network namespace %s: %w", name, err)
	}
	defer unix.Close(fd)
	if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
		unix.Close(orig)
		return nil, fmt.Errorf("enter network namespace %s: %w (needs root)", name, err)
	}
	return func() error {
		defer unix.Close(orig)
		return unix.Setns(orig, unix.CLONE_NEWNET)
	}, nil
}

// Dialer returns a dial function that connects from inside namespace name,
// or a plain dialer when name is empty.
func Dialer(name string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		if name == "" {
			return d.DialContext(ctx, network, addr)
		}
		var c net.Conn
		err := Do(name, func() error {
			var err error
			c, err = d.DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
}
