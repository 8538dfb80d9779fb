package serverhost

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"redline/internal/trusted"
)

// A root session started by sudo acts for the user who ran sudo: it
// connects to a unix socket only if that user could, as the kernel would
// decide for them, and it connects to the very socket it checked (the
// check walks the path one component at a time with O_PATH|O_NOFOLLOW
// descriptors, and the connection goes through the last one), so no
// directory or link swapped after the check moves it elsewhere.

// invoker is the user a root session acts for.
type invoker struct {
	uid  uint32
	gids []uint32
	name string
}

// sudoInvoker is the user who ran sudo when this process is root and
// $SUDO_UID names someone else; nil otherwise (not root: the kernel
// checks the caller itself; a root login: root may).
func sudoInvoker() (*invoker, error) {
	s := os.Getenv("SUDO_UID")
	if os.Geteuid() != 0 || s == "" || s == "0" {
		return nil, nil
	}
	uid, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("SUDO_UID %q: not a uid", s)
	}
	inv := &invoker{uid: uint32(uid), name: "uid " + s}
	if g, err := strconv.ParseUint(os.Getenv("SUDO_GID"), 10, 32); err == nil {
		inv.gids = append(inv.gids, uint32(g))
	}
	u, err := user.LookupId(s)
	if err != nil {
		return nil, fmt.Errorf("the invoking user %s: %w", s, err)
	}
	inv.name = u.Username
	gids, err := u.GroupIds()
	if err != nil {
		return nil, fmt.Errorf("the groups of %s: %w", u.Username, err)
	}
	for _, g := range gids {
		if n, err := strconv.ParseUint(g, 10, 32); err == nil && !slices.Contains(inv.gids, uint32(n)) {
			inv.gids = append(inv.gids, uint32(n))
		}
	}
	return inv, nil
}

// Access bits, as the kernel's MAY_EXEC and MAY_WRITE.
const (
	mayExec  = 1
	mayWrite = 2
)

// openSocketAs resolves the unix socket path p as inv's connect(2) would
// (search permission on every directory crossed, following symlinks under
// fs.protected_symlinks' rule, write permission on the socket) and returns
// an O_PATH descriptor of the socket: the walk is trusted.Walk's, one
// component at a time, so the socket returned is the one checked.
// testHookSocketChecked runs between the check and the return (tests swap
// the path there).
func openSocketAs(p string, inv *invoker) (int, error) {
	deny := func(at, why string) error {
		return fmt.Errorf("%s %s (%s); the session connects only where you could: %w", inv.name, why, at, errNotPermitted)
	}
	fd, err := trusted.Walk(p, trusted.Visit{
		Dir: func(at string, fd int, st *unix.Stat_t) error {
			if !mayAccess(fd, st, inv, mayExec) {
				return deny(at, "cannot search directory")
			}
			return nil
		},
		// fs.protected_symlinks: in a sticky world-writable directory a
		// link is followed only by its owner, or when the directory's
		// owner owns it.
		Link: func(at string, st, dir *unix.Stat_t) error {
			if dir.Mode&unix.S_ISVTX != 0 && dir.Mode&0o002 != 0 && st.Uid != inv.uid && st.Uid != dir.Uid && protectedSymlinks() {
				return deny(at, "may not follow the link of another user in a sticky directory")
			}
			return nil
		},
		File: func(at string, fd int, st *unix.Stat_t) error {
			if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
				return fmt.Errorf("%s is not a socket", at)
			}
			if !mayAccess(fd, st, inv, mayWrite) {
				return deny(at, "cannot connect to it: its mode and owner")
			}
			return nil
		},
	})
	if errors.Is(err, trusted.ErrDirectory) {
		return -1, fmt.Errorf("redis socket %s: a directory, not a socket", p)
	}
	if err != nil {
		return -1, fmt.Errorf("redis socket %s: %w", p, err)
	}
	if testHookSocketChecked != nil {
		testHookSocketChecked()
	}
	return fd, nil
}

// testHookSocketChecked runs once a socket passed openSocketAs's check
// (tests swap the path there).
var testHookSocketChecked func()

// errNotPermitted marks a socket the invoking user could not connect to.
var errNotPermitted = errors.New("not permitted")

// protectedSymlinks reports whether fs.protected_symlinks is on (its
// default); unreadable counts as on, the stricter reading.
func protectedSymlinks() bool {
	b, err := os.ReadFile("/proc/sys/fs/protected_symlinks")
	return err != nil || strings.TrimSpace(string(b)) != "0"
}

// mayAccess is the kernel's permission check for inv on the inode of fd
// (st its stat): its POSIX access ACL when it has one, else the owner,
// group and other bits, each class exclusive of the next.
func mayAccess(fd int, st *unix.Stat_t, inv *invoker, want uint32) bool {
	if acl, ok := accessACL(fd); ok {
		return acl.permits(st, inv, want)
	}
	mode := st.Mode
	switch {
	case st.Uid == inv.uid:
		return (mode>>6)&want == want
	case slices.Contains(inv.gids, st.Gid):
		return (mode>>3)&want == want
	}
	return mode&want == want
}

// aclEntry is one entry of a POSIX ACL as its xattr holds it.
type aclEntry struct {
	tag, perm uint16
	id        uint32
}

type posixACL []aclEntry

// The tags of system.posix_acl_access entries (linux/posix_acl.h).
const (
	aclUserObj  = 0x01
	aclUser     = 0x02
	aclGroupObj = 0x04
	aclGroup    = 0x08
	aclMask     = 0x10
	aclOther    = 0x20
)

// accessACL reads fd's access ACL (system.posix_acl_access, through the
// descriptor's /proc link: an O_PATH descriptor takes no fgetxattr).
// ok is false when there is none (the mode bits decide).
func accessACL(fd int) (posixACL, bool) {
	buf := make([]byte, 4096)
	n, err := unix.Getxattr("/proc/self/fd/"+strconv.Itoa(fd), "system.posix_acl_access", buf)
	if err != nil || n < 4 || (n-4)%8 != 0 || binary.LittleEndian.Uint32(buf) != 2 {
		return nil, false
	}
	var acl posixACL
	for i := 4; i < n; i += 8 {
		acl = append(acl, aclEntry{tag: binary.LittleEndian.Uint16(buf[i:]), perm: binary.LittleEndian.Uint16(buf[i+2:]), id: binary.LittleEndian.Uint32(buf[i+4:])})
	}
	return acl, len(acl) > 0
}

// permits is the kernel's posix_acl_permission: the owner entry for the
// owner; a named user's entry, masked; else any matching group entry
// that grants all of want, masked; a matching group that does not is a
// refusal; else the other entry.
func (acl posixACL) permits(st *unix.Stat_t, inv *invoker, want uint32) bool {
	var match *aclEntry
	found := false
	for i := range acl {
		e := &acl[i]
		switch e.tag {
		case aclUserObj:
			if st.Uid == inv.uid {
				return uint32(e.perm)&want == want
			}
		case aclUser:
			if e.id == inv.uid {
				match = e
			}
		case aclGroupObj, aclGroup:
			gid := e.id
			if e.tag == aclGroupObj {
				gid = st.Gid
			}
			if slices.Contains(inv.gids, gid) {
				found = true
				if uint32(e.perm)&want == want {
					match = e
				}
			}
		case aclOther:
			if found {
				return false
			}
			return uint32(e.perm)&want == want
		}
		if match != nil {
			break
		}
	}
	if match == nil {
		return false
	}
	for _, e := range acl {
		if e.tag == aclMask {
			return uint32(e.perm&match.perm)&want == want
		}
	}
	return uint32(match.perm)&want == want
}
