package serverhost

import (
	"context"
	"errors"

	"redline/internal/remote"
)

// OpenOptions say which host to open: this machine (LocalOptions), or,
// when Dial names an ssh destination, a session there.
type OpenOptions struct {
	Local LocalOptions
	Dial  remote.DialOptions
}

// ErrLocalOnly is Open's refusal of a fixture tree or a /proc or /sys of
// this machine's for a remote host.
var ErrLocalOnly = errors.New("--ssh acts on the live server host; --root, --procfs, --sysfs and --capture are for this machine")

// Open opens the host: the one place a command or the lab chooses between
// this machine and a server host over ssh.
func Open(ctx context.Context, o OpenOptions) (Host, error) {
	if o.Dial.SSH.Target == "" {
		return NewLocal(o.Local), nil
	}
	if o.Local.Root != "" && o.Local.Root != "/" || o.Local.Proc != "" || o.Local.Sys != "" || o.Local.Record {
		return nil, ErrLocalOnly
	}
	c, err := remote.Dial(ctx, o.Dial)
	if err != nil {
		return nil, err
	}
	return NewRemote(c, o.Dial.SSH.Target), nil
}
