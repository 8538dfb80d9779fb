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

func (r *runner) connectError(err error) error {
	var errno unix.Errno
	msg := err.Error()
	if errors.As(err, &errno) {
		msg = capitalise(errno.Error())
	}
	return fmt.Errorf("Could not connect to Redis at %s: %s", r.target, msg)
}

func (r *runner) closedError(outstanding int) error {
	return fmt.Errorf("Error: Server closed the connection (%s, %d requests outstanding on it)", r.target, outstanding)
}

func (r *runner) ioError(op string, err error, outstanding int) error {
	if errors.Is(err, unix.ECONNRESET) || errors.Is(err, unix.EPIPE) {
		return fmt.Errorf("Error: Server closed the connection (%s: %v; %d requests outstanding on it)", r.target, err, outstanding)
	}
	return fmt.Errorf("Error: %s %s: %v (%d requests outstanding on that connection)", op, r.target, err, outstanding)
}

func (r *runner) timeoutError(outstanding int) error {
	return fmt.Errorf("Error: no reply from %s within %s with %d requests outstanding: the server stopped answering (raise --timeout if replies can legitimately take longer)", r.target, r.o.Timeout, outstanding)
}

// replyError names the command an error reply answered.
func (r *runner) replyError(reply []byte, class uint8) error {
	cmd := r.test.Title
	if int(class) < len(r.test.Mix) {
		cmd = strings.Join(r.test.Mix[class].Args, " ")
	} else if len(r.test.Args) > 0 {
		cmd = strings.Join(r.test.Args, " ")
	}
	return fmt.Errorf("Error from server: %s (in reply to %q, test %s)", errorText(reply), clip([]byte(cmd)), r.test.Title)
}

func (r *runner) handshakeError(reply []byte) error {
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
