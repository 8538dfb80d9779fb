package secret

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"redline/internal/atomicfile"
)

// Where a password may go. A password given on this command line (-a,
// --pass-file) is meant for whatever address the command talks to. The
// environment's ($REDISCLI_AUTH, set once in a shell for many commands)
// belongs to the addresses given on the command line. An address a file
// names (a lab scenario's target, a tune plan's redis.addr, a resumed
// autotune journal's --addr) is someone else's word: the file may have
// been written, copied or mailed by anyone, and on a shared host any
// local user can listen on a loopback port. So the environment's
// password goes to a file's address only when that address is this
// machine's and is served by root or the invoking user: a TCP listener on
// loopback whose socket they own (/proc/net/tcp's uid), or a unix socket
// they own on a path nobody else can change. Otherwise it is withheld
// and the caller says why (give --pass-file to send one anyway).

// Given is a password of the command line and how it was given.
type Given struct {
	Value string
	// Explicit: -a or --pass-file on this command line, not the
	// environment.
	Explicit bool
}

// CommandPassword is the command line's password: flag (-a), else the
// first line of file (--pass-file), else $REDISCLI_AUTH.
func CommandPassword(flag, file string) (Given, error) {
	pw, err := Resolve(flag, file, FromEnv())
	return Given{Value: pw, Explicit: flag != "" || file != ""}, err
}

// ForFileAddress is the one decision on a password for an address a
// file names (network "tcp" or "unix"): the password to send, or "" and
// why it was withheld (empty when there was none to send).
func (g Given) ForFileAddress(network, addr string) (pw, withheld string) {
	switch {
	case g.Value == "":
		return "", ""
	case g.Explicit:
		return g.Value, ""
	}
	var err error
	if network == "unix" || filepath.IsAbs(addr) {
		err = ownedSocket(addr)
	} else {
		err = ownedListener(addr)
	}
	if err != nil {
		return "", fmt.Sprintf("$%s not sent to %s, an address a file names: %v (give --pass-file to send a password there)", EnvVar, addr, err)
	}
	return g.Value, ""
}

// trustedUIDs are the owners a file's address may have to get the
// environment's password: root, this process's user and, under sudo,
// the user who ran it.
func trustedUIDs() []uint32 {
	uids := []uint32{0, uint32(os.Geteuid())}
	if n, err := strconv.ParseUint(os.Getenv("SUDO_UID"), 10, 32); err == nil && os.Geteuid() == 0 {
		uids = append(uids, uint32(n))
	}
	return uids
}

func trustedUID(uid uint32) bool {
	for _, u := range trustedUIDs() {
		if u == uid {
			return true
		}
	}
	return false
}

// ownedListener checks that addr is on loopback and that every TCP
// listener that could take its connections (bound to it or to the
// wildcard) belongs to a trusted user.
func ownedListener(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return fmt.Errorf("port %q", port)
	}
	var ips []net.IP
	switch ip := net.ParseIP(host); {
	case host == "localhost":
		ips = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	case ip != nil && ip.IsLoopback():
		ips = []net.IP{ip}
	default:
		return fmt.Errorf("not this machine's loopback")
	}
	ls, err := tcpListeners()
	if err != nil {
		return err
	}
	found := false
	for _, l := range ls {
		if l.port != p || !takes(l.ip, ips) {
			continue
		}
		if !trustedUID(l.uid) {
			return fmt.Errorf("its listener belongs to uid %d, neither root nor you", l.uid)
		}
		found = true
	}
	if !found {
		return fmt.Errorf("nothing listens there")
	}
	return nil
}

// takes says whether a listener bound to ip takes connections to one of
// ips: bound to one of them, or to the wildcard.
func takes(ip net.IP, ips []net.IP) bool {
	if ip.IsUnspecified() {
		return true
	}
	for _, x := range ips {
		if ip.Equal(x) {
			return true
		}
	}
	return false
}

// ownedSocket checks that the unix socket p belongs to a trusted user
// and that nobody else can change the path to it.
func ownedSocket(p string) error {
	if err := atomicfile.Unchangeable(p); err != nil {
		return err
	}
	st, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if st.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("not a socket")
	}
	if uid := st.Sys().(*syscall.Stat_t).Uid; !trustedUID(uid) {
		return fmt.Errorf("the socket belongs to uid %d, neither root nor you", uid)
	}
	return nil
}
