package bench

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/sys/unix"

	"redline/internal/resp"
)

// The run's error messages keep redis-benchmark's wording where it has one,
// and add what it leaves out: which server, how much was outstanding, and
// which command an error reply answered.

// connectErrorAt names the server a connect failed to (a cluster node).
func (r *runner) connectErrorAt(target string, err error) error {
	var errno unix.Errno
	msg := err.Error()
	if errors.As(err, &errno) {
		msg = capitalise(errno.Error())
	}
	if errors.Is(err, unix.EADDRNOTAVAIL) {
		msg += " (EADDRNOTAVAIL: the client is out of local ports; widen net.ipv4.ip_local_port_range or set net.ipv4.tcp_tw_reuse 1, or keep connections alive with -k 1)"
	}
	return fmt.Errorf("Could not connect to Redis at %s: %s", target, msg)
}

func (r *runner) closedError(outstanding int) error { return r.closedErrorAt(r.target, outstanding) }

func (r *runner) closedErrorAt(target string, outstanding int) error {
	return fmt.Errorf("Error: Server closed the connection (%s, %d requests outstanding on it)", target, outstanding)
}

func (r *runner) ioError(op string, err error, outstanding int) error {
	return r.ioErrorAt(r.target, op, err, outstanding)
}

func (r *runner) ioErrorAt(target, op string, err error, outstanding int) error {
	if errors.Is(err, unix.ECONNRESET) || errors.Is(err, unix.EPIPE) {
		return fmt.Errorf("Error: Server closed the connection (%s: %v; %d requests outstanding on it)", target, err, outstanding)
	}
	return fmt.Errorf("Error: %s %s: %v (%d requests outstanding on that connection)", op, target, err, outstanding)
}

func (r *runner) timeoutError(outstanding int) error { return r.timeoutErrorAt(r.target, outstanding) }

func (r *runner) timeoutErrorAt(target string, outstanding int) error {
	return fmt.Errorf("Error: no reply from %s within %s with %d requests outstanding: the server stopped answering, or its reply never completed (raise --timeout if replies can legitimately take longer)", target, r.o.Timeout, outstanding)
}

// refusedError recognises the error a server sends a connection it will
// not serve, whatever the connection was doing when it read it: Redis at
// maxclients writes it on accept and closes, so depending on timing it
// arrives before any request, as the answer to AUTH/HELLO, or as the
// answer to the first request, and must be named the same in every case.
func (r *runner) refusedError(reply []byte) error {
	msg := errorText(reply)
	if !strings.Contains(msg, "max number of clients reached") {
		return nil
	}
	return fmt.Errorf("Error: %s refused a connection: %s (the server is at its maxclients limit; this run needs %d connections besides those already open: raise maxclients, e.g. redis-cli CONFIG SET maxclients N, or lower -c)", r.target, msg, r.o.Clients)
}

// unsolicitedError is an error reply that came with no request
// outstanding on the connection.
func (r *runner) unsolicitedError(reply []byte) error {
	if err := r.refusedError(reply); err != nil {
		return err
	}
	return fmt.Errorf("Error from server before any request on the connection (%s): %s", r.target, errorText(reply))
}

// replyError names the command an error reply answered.
func (r *runner) replyError(reply []byte, class uint8) error {
	if err := r.refusedError(reply); err != nil {
		return err
	}
	cmd := r.test.Title
	if int(class) < len(r.test.Mix) {
		cmd = strings.Join(r.test.Mix[class].Args, " ")
	} else if len(r.test.Args) > 0 {
		cmd = strings.Join(r.test.Args, " ")
	}
	return fmt.Errorf("Error from server: %s (in reply to %q, test %s)", errorText(reply), clip([]byte(cmd)), r.test.Title)
}

func (r *runner) handshakeError(reply []byte) error {
	if err := r.refusedError(reply); err != nil {
		return err
	}
	return fmt.Errorf("Error from server during connection set-up (%s) on %s: %s", strings.Join(r.prefixNames, ", "), r.target, errorText(reply))
}

// errorText extracts the message of a simple (-) or blob (!) error reply.
func errorText(reply []byte) string {
	v, _, err := resp.Parse(reply)
	if err != nil {
		return strings.TrimSpace(string(reply))
	}
	return v.Str
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}
