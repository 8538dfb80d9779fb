// Package kernel asks the running kernel what no file under a root
// directory holds (host's live-only probes): ethtool ioctls, netlink dumps (rtnetlink addresses,
// sock_diag TCP sockets, in the caller's or another network namespace),
// files read inside another network namespace, and a process's socket
// fds (a BPF task_file iterator, else readlink of /proc/PID/fd).
//
// host's reader calls it through Interface and only on the live machine;
// a fixture tree answers the same questions from the files a capture
// wrote. Live is the running kernel; tests substitute an Interface of
// their own, or a Live with its test switches set.
package kernel

// Interface is what host's reader asks the live machine.
type Interface interface {
	// Ethtool asks each NIC's driver what `ethtool -i/-l/-g/-c/-k`
	// print.
	Ethtool(ifnames []string) (map[string]*Ethtool, error)
	// InterfaceAddrs lists the addresses of every interface of the
	// caller's network namespace by name ([] for none).
	InterfaceAddrs() (map[string][]string, error)
	// ReadInNetns reads files inside the network namespace of pid; a
	// namespace that cannot be entered gives every path that error.
	ReadInNetns(pid int, paths []string) ([][]byte, []error)
	// OpenSockDiag makes a sock_diag socket in the calling thread's
	// network namespace.
	OpenSockDiag() (SockDiag, error)
	// OpenSockDiagIn makes one inside the network namespace of pid,
	// which must still be namespace ino.
	OpenSockDiagIn(pid int, ino uint64) (SockDiag, error)
	// FDSockets calls visit with the inode of each socket among the fds
	// of a /proc/PID/fd directory until visit returns true; a process
	// that ends meanwhile gives ErrProcessGone.
	FDSockets(fdDir string, visit func(ino uint64) (stop bool)) error
}

// SockDiag is a sock_diag socket of one network namespace.
type SockDiag interface {
	// Dump returns the TCP sockets in states (a bit per TCP state) whose
	// local or remote port is one of ports (nil: all) as Records. After
	// an error the socket may hold part of a reply: close it.
	Dump(states uint32, ports []int) ([]byte, error)
	Close() error
}

// Live is the running kernel. Its zero value is ready; the fields are
// test switches.
type Live struct {
	// NoIterator keeps fd scans to readlink.
	NoIterator bool
	// FDHook runs after each fd link a scan reads, with the fd's name; in
	// a scan by the iterator, after each socket it gives.
	FDHook func(fd string)
	// BeforeNetns runs before OpenSockDiagIn enters the namespace of pid.
	BeforeNetns func(pid int)
}

var _ Interface = Live{}
