package serverhost

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"redline/internal/remote"
	"redline/internal/tune"
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

// ErrNoStateDir is Open's refusal of this machine's state directory when
// LocalOptions.StateDirMustExist and it does not exist.
var ErrNoStateDir = errors.New("no such state directory (nothing was applied with it)")

// Open opens the host: the one place a command or the lab chooses between
// this machine and a server host over ssh.
func Open(ctx context.Context, o OpenOptions) (Host, error) {
	if o.Dial.SSH.Target == "" {
		dir := cmp.Or(o.Local.StateDir, tune.DefaultStateDir)
		if _, err := os.Stat(dir); o.Local.StateDirMustExist && errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", dir, ErrNoStateDir)
		}
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
