package tune

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"redline/internal/change"
	"redline/internal/netns"
)

// NetNSRef is the network namespace a change was made in: net.* sysctls
// and the Redis server's address belong to one. The journal records it
// with every session and every intent, so a rollback from anywhere acts in
// that namespace, or reports it gone, and never writes the host's value
// for a namespace's.
type NetNSRef struct {
	// Enter is how to get back in: an `ip netns` name, a bind-mount path,
	// or /proc/PID/ns/net (netns.Do's forms); "" is the namespace tune
	// itself ran in (the host's, as a rule).
	Enter string `json:"enter,omitempty"`
	// Ino and Dev identify the namespace (the inode of its nsfs file):
	// rollback verifies them before writing.
	Ino uint64 `json:"ino"`
	Dev uint64 `json:"dev"`
}

// String names the namespace for people.
func (r *NetNSRef) String() string {
	where := r.Enter
	if where == "" {
		where = "the apply's own"
	}
	return fmt.Sprintf("network namespace %s (net:[%d])", where, r.Ino)
}

// nsBound reports whether c's target lives in a network namespace: a net.*
// sysctl (the ones a namespace has its own of), a Redis setting (the
// server is reached at an address of the namespace) or a NIC's channels.
// IRQs, THP, vm.* and the like are the host's whatever namespace wrote
// them.
func nsBound(c change.Change) bool {
	switch c.Kind {
	case change.KindSysctl:
		p, err := change.SysctlPath(c.Target)
		return err == nil && strings.HasPrefix(p, "/proc/sys/net/")
	case change.KindRedisConfig, change.KindChannels:
		return true
	}
	return false
}

// errNetNSMoved is a namespace that is reachable but not the journaled one.
var errNetNSMoved = errors.New("not the network namespace the change was made in")

// threadNetNS identifies the network namespace of the calling thread,
// which the caller has locked.
func threadNetNS() (NetNSRef, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/thread-self/ns/net", &st); err != nil {
		return NetNSRef{}, fmt.Errorf("current network namespace: %w", err)
	}
	return NetNSRef{Ino: st.Ino, Dev: st.Dev}, nil
}

// inNetNS runs fn on a thread in the system's network namespace: the one
// named by s.NetNS (entered through internal/netns), or the current one.
// When s.wantNS is set (rollback and status of a journaled session), the
// namespace is verified to be the journaled one first. Rehearsal trees
// have no namespace: fn runs as it is.
func (s *System) inNetNS(fn func() error) error {
	if !s.Live || (s.NetNS == "" && s.wantNS == nil) {
		return fn()
	}
	check := func() error {
		if s.wantNS == nil {
			return fn()
		}
		id, err := threadNetNS()
		if err != nil {
			return err
		}
		if id.Ino != s.wantNS.Ino || id.Dev != s.wantNS.Dev {
			return fmt.Errorf("%w: here net:[%d], journaled %s", errNetNSMoved, id.Ino, s.wantNS)
		}
		return fn()
	}
	if s.NetNS != "" {
		return netns.Do(s.NetNS, check)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return check()
}

// netNSRef is the identity of the system's namespace, for the journal;
// nil on a rehearsal tree.
func (s *System) netNSRef() (*NetNSRef, error) {
	if !s.Live {
		return nil, nil
	}
	var ref NetNSRef
	err := s.inNetNS(func() (err error) {
		ref, err = threadNetNS()
		return err
	})
	if err != nil {
		return nil, err
	}
	ref.Enter = s.NetNS
	return &ref, nil
}

// useNetNS makes the system's NIC channels those of its namespace, when
// they are the ethtool ioctl of the current one.
func (s *System) useNetNS() {
	if e, ok := s.Channels.(Ethtool); ok && e.NetNS == "" && s.NetNS != "" {
		s.Channels = Ethtool{NetNS: s.NetNS}
	}
}

// netNSGone says why a journaled namespace can no longer be entered (it
// was deleted: its bind mount or its process is gone, or the name now
// holds another namespace), or "" when it is still there. The namespace
// tune itself ran in ("" Enter) is never gone: if rollback runs elsewhere
// it fails instead, and the journal keeps the change.
func netNSGone(ref *NetNSRef) string {
	if ref == nil || ref.Enter == "" {
		return ""
	}
	var st unix.Stat_t
	err := unix.Stat(netns.Path(ref.Enter), &st)
	switch {
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ESRCH):
		return fmt.Sprintf("%s is gone (deleted since the apply); its values went with it", ref)
	case err != nil:
		return ""
	case st.Ino != ref.Ino || st.Dev != ref.Dev:
		return fmt.Sprintf("%s is gone: %s now holds another namespace (net:[%d]); the values went with the old one", ref, ref.Enter, st.Ino)
	}
	return ""
}
