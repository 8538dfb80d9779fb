// Package netns enters network namespaces, the one place redline does so:
// a named namespace (as made by "ip netns add NAME", /run/netns/NAME), a
// namespace file given by path, or a process's (/proc/PID/ns/net). It also
// manages the namespaces and veth links of the lab's two-host topology.
package netns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"runtime"
	"strconv"
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

// PidPath returns the namespace file of process pid, for Do and Enter.
func PidPath(pid int) string {
	return "/proc/" + strconv.Itoa(pid) + "/ns/net"
}

// setns is unix.Setns; tests replace it to make the way back fail.
var setns = unix.Setns

// Do runs fn on an OS thread that has entered namespace ns (a name, a path
// or PidPath), then moves the thread back; an empty ns runs fn here.
// Sockets fn creates belong to the namespace and can be used from any
// goroutine afterwards. If the thread cannot be moved back it is never
// handed to another goroutine: its goroutine ends still locked, so the
// runtime destroys the thread, and Do reports the failure.
func Do(ns string, fn func() error) error {
	if ns == "" {
		return fn()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		restore, err := Enter(ns)
		if err != nil {
			runtime.UnlockOSThread() // setns failed: still in the old namespace
			errc <- err
			return
		}
		err = fn()
		if rerr := restore(); rerr != nil {
			errc <- errors.Join(err, rerr) // exit locked: the thread dies with us
			return
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}

// Enter moves the calling OS thread, which the caller has locked, into
// namespace ns (a name, a path or PidPath), and returns a function that
// moves it back. Unlock the thread only if that function succeeds;
// otherwise end the goroutine while still locked. Do does all this; Enter
// is for a goroutine that lives on its thread (the load generator's event
// loops).
func Enter(ns string) (restore func() error, err error) {
	orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("current network namespace: %w", err)
	}
	fd, err := unix.Open(Path(ns), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(orig)
		return nil, fmt.Errorf("network namespace %s: %w", ns, err)
	}
	defer unix.Close(fd)
	if err := setns(fd, unix.CLONE_NEWNET); err != nil {
		unix.Close(orig)
		return nil, fmt.Errorf("enter network namespace %s: %w (needs root)", ns, err)
	}
	return func() error {
		defer unix.Close(orig)
		if err := setns(orig, unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("leave network namespace %s: %w", ns, err)
		}
		return nil
	}, nil
}

// Dialer returns a dial function that connects from inside namespace ns,
// or a plain dialer when ns is empty.
func Dialer(ns string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		var c net.Conn
		err := Do(ns, func() error {
			var err error
			c, err = d.DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
}
