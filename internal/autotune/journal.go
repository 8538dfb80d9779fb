package autotune

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"redline/internal/atomicfile"
	"redline/internal/profiledata"
)

// JournalFile is the session's journal in its directory: one JSON object
// a line, appended and fsynced before the session goes on. A session is
// deterministic given its options (the seed draws every order) and the
// values it measured, so resuming replays the journal: the measurements
// it holds are answered from it, the decisions are made again and checked
// against the ones it recorded, and the session continues from where the
// journal ends.
const JournalFile = "autotune.jsonl"

// event is one line of the journal.
type event struct {
	Event string `json:"event"` // "start", "measure", "trial"
	// start
	Options *Options `json:"options,omitempty"`
	// measure: the value as measured (not inverted), its p99 and breakdown
	Config    string                 `json:"config,omitempty"`
	Value     float64                `json:"value,omitempty"`
	P99       float64                `json:"p99,omitempty"`
	Breakdown *profiledata.Breakdown `json:"breakdown,omitempty"`
	Commands  []CommandTime          `json:"commands,omitempty"`
	// trial: a decision
	Trial *Trial `json:"trial,omitempty"`
	// group: a group test's decision (group screening)
	Group *GroupTest `json:"group,omitempty"`
}

type journal struct {
	f    *os.File // nil: no journal
	past []event  // what a resumed session replays
	next int
}

// A journal is a file that travels: it goes with its reports (copied,
// mailed, restored from a backup), so --resume treats it as someone
// else's input. The directory is checked before anything in it is
// opened (atomicfile.OwnDir: the caller's own, writable by nobody else);
// the journal is opened without following a link and without blocking
// (a FIFO), must be a regular file, is read up to maxJournalBytes, and
// each line must be an event of a known kind with sane values
// (event.check). A torn last line is cut through the descriptor that
// was checked, never by name.

// maxJournalBytes bounds a journal: a session of the default budget
// writes a few hundred kilobytes.
const maxJournalBytes = 64 << 20

// maxJournalLine bounds one line (a measurement with its breakdown).
const maxJournalLine = 1 << 20

// openJournal starts dir's journal, or reopens it to resume. A resumed
// session must have the options the journal started with.
func openJournal(dir string, o Options, resume bool) (*journal, error) {
	if dir == "" {
		return &journal{}, nil
	}
	if err := checkDir(dir, resume); err != nil {
		return nil, err
	}
	flags := unix.O_RDWR | unix.O_APPEND
	if !resume {
		flags |= unix.O_CREAT
	}
	f, err := openJournalFile(filepath.Join(dir, JournalFile), flags)
	if resume && errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("autotune: nothing to resume in %s: %w", dir, err)
	}
	if err != nil {
		return nil, err
	}
	// One session a directory: a second one (or a second --resume) would
	// interleave its lines with the first's.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("autotune: %s is in use by another session (%w)", dir, err)
	}
	past, err := prepareJournal(f, resume)
	if err != nil {
		f.Close()
		return nil, err
	}
	j := &journal{f: f, past: past}
	if err := j.start(o); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

// prepareJournal reads the locked journal f and cuts a torn last line;
// a new session's journal must be empty.
func prepareJournal(f *os.File, resume bool) ([]event, error) {
	past, complete, err := readJournal(f)
	switch {
	case err != nil:
		return nil, err
	case !resume && len(past) > 0:
		dir := filepath.Dir(f.Name())
		return nil, fmt.Errorf("autotune: %s already holds a session; resume it (--resume %s) or use another directory", dir, dir)
	}
	if st, err := f.Stat(); err == nil && st.Size() > complete {
		if err := f.Truncate(complete); err != nil {
			return nil, fmt.Errorf("autotune: %w", err)
		}
	}
	return past, nil
}

// checkDir holds a session's directory to atomicfile.OwnDir (the caller's
// own, not a link, writable by nobody else: a root session in a shared
// directory writes its journal, state and reports here); one to resume
// must exist (OwnDir would make it).
func checkDir(dir string, resume bool) error {
	if resume {
		if _, err := os.Lstat(dir); err != nil {
			return fmt.Errorf("autotune: nothing to resume in %s: %w", dir, err)
		}
	}
	if err := atomicfile.OwnDir(dir, 0o700); err != nil {
		return fmt.Errorf("autotune: %w", err)
	}
	return nil
}

// openJournalFile opens the journal with flags, never through a link or
// blocking on a FIFO, and only a regular file.
func openJournalFile(path string, flags int) (*os.File, error) {
	fd, err := unix.Open(path, flags|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("autotune: %w", &os.PathError{Op: "open", Path: path, Err: err})
	}
	f := os.NewFile(uintptr(fd), path)
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("autotune: journal %s: %w", path, err)
	}
	return f, nil
}

// ReadOptions returns the options the session journaled in dir started
// with (what --resume DIR continues), the directory and the journal held
// to openJournal's rules.
func ReadOptions(dir string) (Options, error) {
	if err := checkDir(dir, true); err != nil {
		return Options{}, err
	}
	f, err := openJournalFile(filepath.Join(dir, JournalFile), unix.O_RDONLY)
	if err != nil {
		return Options{}, err
	}
	defer f.Close()
	past, _, err := readJournal(f)
	if err != nil {
		return Options{}, err
	}
	if len(past) == 0 || past[0].Event != "start" || past[0].Options == nil {
		return Options{}, fmt.Errorf("autotune: %s: the journal does not begin with a session's start", dir)
	}
	return *past[0].Options, nil
}

// readJournal reads every complete line of f (at most maxJournalBytes)
// and returns them with the length of the complete lines: a torn last
// line (a crash in the middle of a write) is dropped and will be written
// again.
func readJournal(f *os.File) (out []event, complete int64, err error) {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, maxJournalBytes+1))
	if err != nil {
		return nil, 0, fmt.Errorf("autotune: %w", err)
	}
	if len(b) > maxJournalBytes {
		return nil, 0, fmt.Errorf("autotune: %s: larger than %d MiB: not a session's journal", f.Name(), maxJournalBytes>>20)
	}
	complete = int64(bytes.LastIndexByte(b, '\n') + 1)
	sc := bufio.NewScanner(bytes.NewReader(b[:complete]))
	sc.Buffer(make([]byte, 64<<10), maxJournalLine)
	for n := 1; sc.Scan(); n++ {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, 0, fmt.Errorf("autotune: %s line %d: %w", f.Name(), n, err)
		}
		if err := e.check(n); err != nil {
			return nil, 0, fmt.Errorf("autotune: %s line %d: %w", f.Name(), n, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, 0, fmt.Errorf("autotune: %s: %w", f.Name(), err)
	}
	return out, complete, nil
}

// check holds a journal line to what a session writes: a start first
// and only first, then measurements and decisions with their fields.
func (e event) check(line int) error {
	switch {
	case (e.Event == "start") != (line == 1):
		return fmt.Errorf("event %q: a journal starts with one start", e.Event)
	case e.Event == "start" && e.Options == nil:
		return errors.New("a start without options")
	case e.Event == "measure" && (e.Value < 0 || e.P99 < 0 || e.Config == "" || len(e.Config) > 4096):
		return errors.New("a measurement out of range")
	case e.Event == "trial" && e.Trial == nil:
		return errors.New("a decision without its trial")
	case e.Event == "group" && e.Group == nil:
		return errors.New("a group decision without its group")
	case e.Event != "start" && e.Event != "measure" && e.Event != "trial" && e.Event != "group":
		return fmt.Errorf("unknown event %q", e.Event)
	}
	return nil
}

func (j *journal) start(o Options) error {
	want, _ := json.Marshal(o)
	if j.next < len(j.past) {
		got, _ := json.Marshal(j.past[0].Options)
		if j.past[0].Event != "start" || !bytes.Equal(got, want) {
			return errors.New("autotune: the journal was written by a session with other options; resume it with its own (or start a new directory)")
		}
		j.next++
		return nil
	}
	return j.append(event{Event: "start", Options: &o})
}

// replayed returns the measurement the journal recorded for the next
// measurement, which must be of config.
func (j *journal) replayed(config string) (Measurement, bool, error) {
	if j.next >= len(j.past) {
		return Measurement{}, false, nil
	}
	e := j.past[j.next]
	if e.Event != "measure" || e.Config != config {
		return Measurement{}, false, fmt.Errorf("autotune: the journal's event %d is %s %q where the session measures %s: it does not belong to this session", j.next+1, e.Event, e.Config, config)
	}
	j.next++
	return Measurement{Value: e.Value, P99: e.P99, Breakdown: e.Breakdown, Commands: e.Commands}, true, nil
}

func (j *journal) measured(config string, m Measurement) error {
	return j.append(event{Event: "measure", Config: config, Value: m.Value, P99: m.P99, Breakdown: m.Breakdown, Commands: m.Commands})
}

// decided records a decision, or checks it against the journal's.
func (j *journal) decided(t Trial) error {
	if j.next < len(j.past) {
		e := j.past[j.next]
		if e.Event != "trial" || e.Trial == nil || e.Trial.Decision != t.Decision || e.Trial.Config.String() != t.Config.String() {
			return fmt.Errorf("autotune: the journal's event %d does not match the replayed decision on %s", j.next+1, t.Config)
		}
		j.next++
		return nil
	}
	return j.append(event{Event: "trial", Trial: &t})
}

// grouped records a group test's decision, or checks it against the
// journal's.
func (j *journal) grouped(g GroupTest) error {
	if j.next < len(j.past) {
		e := j.past[j.next]
		if e.Event != "group" || e.Group == nil || e.Group.Decision != g.Decision || e.Group.Members.String() != g.Members.String() {
			return fmt.Errorf("autotune: the journal's event %d does not match the replayed decision on group %s", j.next+1, g.Members)
		}
		j.next++
		return nil
	}
	return j.append(event{Event: "group", Group: &g})
}

func (j *journal) append(e event) error {
	if j.f == nil {
		return nil
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("autotune: journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("autotune: journal: %w", err)
	}
	return nil
}

func (j *journal) close() {
	if j.f != nil {
		j.f.Close()
	}
}
