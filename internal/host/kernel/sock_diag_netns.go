package kernel

import (
	"fmt"

	"golang.org/x/sys/unix"

	"redline/internal/netns"
)

// OpenSockDiagIn creates a sock_diag socket inside the network namespace
// of pid, which must still be ino: a pid reused since ns/net was read
// names another namespace, and its sockets are not the process's. A
// netlink socket belongs to the namespace it was created in, so a locked
// thread enters the namespace (netns.Do: setns, and back), creates the
// socket there and leaves; the dumps then run through it from any
// thread. A socket made there is kept even when the thread could not come
// back (netns.Do retires that thread; the socket stays in the namespace
// it was made in), as ReadInNetns keeps what it read.
func (l Live) OpenSockDiagIn(pid int, ino uint64) (SockDiag, error) {
	if l.BeforeNetns != nil {
		l.BeforeNetns(pid)
	}
	var diag SockDiag
	err := netns.Do(netns.PidPath(pid), func() error {
		var st unix.Stat_t
		if err := unix.Stat("/proc/thread-self/ns/net", &st); err != nil {
			return fmt.Errorf("the namespace entered: %w", err)
		}
		if st.Ino != ino {
			return fmt.Errorf("/proc/%d/ns/net is now namespace %d, not %d (the process was replaced)", pid, st.Ino, ino)
		}
		var err error
		diag, err = l.OpenSockDiag()
		return err
	})
	if diag != nil {
		return diag, nil
	}
	return nil, fmt.Errorf("sock_diag in the network namespace of pid %d: %w", pid, err)
}
