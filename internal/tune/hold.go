package tune

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"redline/internal/atomicfile"
)

// holdName is the file a long-running user of a state directory (a lab,
// steer) locks for as long as it runs. The journal's own lock is held only
// while one plan is applied or rolled back; between a lab's variants it is
// free, and a second lab could apply its changes in between, leaving two
// sessions interleaved in one journal and each rollback finding the other's
// values "drifted".
const holdName = "hold"

// Hold is a state directory held by one long-running redline.
type Hold struct{ f *os.File }

// HoldStateDir takes the state directory dir ("" for DefaultStateDir) for
// the caller's whole run, or refuses at once, naming who holds it, when
// another redline does. what says what the holder is ("redline lab"), for
// that message.
func HoldStateDir(dir, what string) (*Hold, error) {
	dir = stateDir(dir)
	if err := atomicfile.OwnDir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state %w (pass --state-dir to use another)", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, holdName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state directory: %w (pass --state-dir to use another)", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		b, _ := os.ReadFile(f.Name())
		f.Close()
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("state directory %s cannot be locked (%v): pass a --state-dir on a local file system", dir, err)
		}
		who := strings.TrimSpace(string(b))
		if who == "" {
			who = "another redline"
		}
		return nil, fmt.Errorf("state directory %s is in use by %s: wait for it to finish, or pass another --state-dir", dir, who)
	}
	// Who holds it, for the message above; the lock, not this text, is
	// what excludes.
	if err := f.Truncate(0); err == nil {
		fmt.Fprintf(f, "%s (pid %d, since %s)\n", what, os.Getpid(), time.Now().Format(time.DateTime))
	}
	return &Hold{f: f}, nil
}

// Release lets the next redline take the directory.
func (h *Hold) Release() {
	if h == nil || h.f == nil {
		return
	}
	h.f.Truncate(0)
	h.f.Close() // closing the last descriptor drops the flock
	h.f = nil
}
