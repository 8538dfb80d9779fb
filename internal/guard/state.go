package guard

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"redline/internal/atomicfile"
)

// Phases of a guard, as its state file records them.
const (
	PhaseBaseline   = "baseline"    // measuring before the change: nothing applied yet
	PhaseApplying   = "applying"    // the change is being applied (its session not known yet)
	PhaseWatching   = "watching"    // the change is in place and watched
	PhaseKept       = "kept"        // the window ended with no rule tripped
	PhaseRolledBack = "rolled-back" // a rule tripped (or a restart chose to) and the change was undone
	PhaseAbandoned  = "abandoned"   // the guard ended before anything was applied
	PhaseFailed     = "failed"      // the rollback failed: the change may still be in place
)

// SubDir is where guards keep their state, under the tune state directory.
const SubDir = "guard"

// State is what a guard journals about itself: enough for a guard started
// after it was killed to watch on against the same baseline, or to roll
// the change back, and to say which it did. It never holds a password.
type State struct {
	ID      string `json:"id"`
	PID     int    `json:"pid"`
	Phase   string `json:"phase"`
	Session string `json:"session,omitempty"` // the tune journal's apply session
	// Redis is the watched server (no password: a restarted guard is given
	// it again).
	RedisNetwork string `json:"redis_network"`
	RedisAddr    string `json:"redis_addr"`
	RedisUser    string `json:"redis_user,omitempty"`
	RedisNetNS   string `json:"redis_netns,omitempty"`
	// Plan is the plan file applied, for messages.
	Plan         string        `json:"plan,omitempty"`
	Thresholds   Thresholds    `json:"thresholds"`
	ProbeRate    float64       `json:"probe_rate"`
	Interval     time.Duration `json:"interval"`
	Window       time.Duration `json:"window"`
	Baseline     *Baseline     `json:"baseline,omitempty"`
	Started      time.Time     `json:"started"`
	ApplyStarted time.Time     `json:"apply_started,omitzero"`
	WatchStarted time.Time     `json:"watch_started,omitzero"`
	WatchEnds    time.Time     `json:"watch_ends,omitzero"`
	// Heartbeat is the last time the watching guard wrote this file.
	Heartbeat time.Time `json:"heartbeat"`
	Trips     []Trip    `json:"trips,omitempty"`
	// Resumed lists the restarts that took this guard over, and the gap
	// each found unwatched.
	Resumed []string `json:"resumed,omitempty"`
	Detail  string   `json:"detail,omitempty"`
}

// Open reports whether the guard has not finished.
func (s *State) Open() bool {
	switch s.Phase {
	case PhaseBaseline, PhaseApplying, PhaseWatching:
		return true
	}
	return false
}

// Claim is a state file held by this process: the lock beside it is what
// says a guard is alive (a killed one's lock is free).
type Claim struct {
	dir   string
	lock  *os.File
	State *State
}

// NewClaim starts the state of a new guard in dir (the tune state
// directory; the file goes under SubDir) and locks it.
func NewClaim(dir string, s *State) (*Claim, error) {
	gd := filepath.Join(dir, SubDir)
	if err := atomicfile.OwnDir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("guard state %w (pass --state-dir to use another)", err)
	}
	if err := atomicfile.OwnDir(gd, 0o700); err != nil {
		return nil, fmt.Errorf("guard state %w", err)
	}
	if s.ID == "" {
		s.ID = time.Now().UTC().Format("20060102T150405.000000000")
	}
	s.PID = os.Getpid()
	c := &Claim{dir: gd, State: s}
	lock, ok, err := tryLock(c.lockPath())
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("guard %s is held by another redline", s.ID)
	}
	c.lock = lock
	return c, c.Save()
}

func (c *Claim) path() string     { return filepath.Join(c.dir, c.State.ID+".json") }
func (c *Claim) lockPath() string { return filepath.Join(c.dir, c.State.ID+".lock") }

func tryLock(path string) (*os.File, bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("guard state: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("guard state %s cannot be locked (%v): use a --state-dir on a local file system", path, err)
	}
	return f, true, nil
}

// Save writes the state (fsynced, atomically) with a fresh heartbeat.
func (c *Claim) Save() error {
	c.State.Heartbeat = time.Now()
	b, err := json.MarshalIndent(c.State, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(c.path(), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("guard state: %w", err)
	}
	return nil
}

// Set moves the guard to phase with a detail and saves it.
func (c *Claim) Set(phase, detail string) error {
	c.State.Phase = phase
	if detail != "" {
		c.State.Detail = detail
	}
	return c.Save()
}

// Release drops the lock (the state file stays, as the record).
func (c *Claim) Release() {
	if c != nil && c.lock != nil {
		c.lock.Close()
		c.lock = nil
	}
}

// ReadStates reads every guard state under dir (the tune state
// directory), oldest first, saying for each whether a live guard holds it.
func ReadStates(dir string) ([]*State, []bool, error) {
	gd := filepath.Join(dir, SubDir)
	ents, err := os.ReadDir(gd)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("guard state: %w", err)
	}
	var out []*State
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		s, err := readState(filepath.Join(gd, e.Name()))
		if err != nil {
			return nil, nil, err
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	alive := make([]bool, len(out))
	for i, s := range out {
		alive[i] = s.Open() && isHeld(filepath.Join(gd, s.ID+".lock"))
	}
	return out, alive, nil
}

// maxStateBytes bounds a guard's state file (its baseline is a few
// hundred ticks of figures).
const maxStateBytes = 4 << 20

func readState(p string) (*State, error) {
	b, err := atomicfile.ReadRegular(p, maxStateBytes)
	if err != nil {
		return nil, fmt.Errorf("guard state: %w", err)
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("guard state %s: %w (a damaged file: move it away and run redline tune status)", p, err)
	}
	return &s, nil
}

// isHeld says whether a live process holds the lock.
func isHeld(lock string) bool {
	f, ok, err := tryLock(lock)
	if err != nil {
		return false
	}
	if ok {
		f.Close()
		return false
	}
	return true
}

// Orphans takes over every guard under dir that did not finish and whose
// process is gone (killed mid-window): the caller watches on or rolls
// back each, and releases it.
func Orphans(dir string) ([]*Claim, error) {
	states, _, err := ReadStates(dir)
	if err != nil {
		return nil, err
	}
	gd := filepath.Join(dir, SubDir)
	var out []*Claim
	for _, s := range states {
		if !s.Open() {
			continue
		}
		c := &Claim{dir: gd, State: s}
		lock, ok, err := tryLock(c.lockPath())
		if err != nil {
			return out, err
		}
		if !ok {
			continue // a live guard watches it
		}
		c.lock = lock
		// re-read under the lock: the owner may have finished meanwhile
		if s2, err := readState(c.path()); err == nil {
			c.State = s2
		}
		if !c.State.Open() {
			c.Release()
			continue
		}
		c.State.PID = os.Getpid()
		out = append(out, c)
	}
	return out, nil
}
