package autotune

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"redline/internal/atomicfile"
	"redline/internal/labdata"
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
	Config    string             `json:"config,omitempty"`
	Value     float64            `json:"value,omitempty"`
	P99       float64            `json:"p99,omitempty"`
	Breakdown *labdata.Breakdown `json:"breakdown,omitempty"`
	Commands  []CommandTime      `json:"commands,omitempty"`
	// trial: a decision
	Trial *Trial `json:"trial,omitempty"`
}

type journal struct {
	f    *os.File // nil: no journal
	past []event  // what a resumed session replays
	next int
}

// openJournal starts dir's journal, or reopens it to resume. A resumed
// session must have the options the journal started with.
func openJournal(dir string, o Options, resume bool) (*journal, error) {
	if dir == "" {
		return &journal{}, nil
	}
	// The directory is the caller's own, not a link, writable by nobody
	// else (a root session in a shared directory writes its journal,
	// state and reports here), and the journal is no link either.
	if err := atomicfile.OwnDir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("autotune: %w", err)
	}
	path := filepath.Join(dir, JournalFile)
	past, err := readJournal(path)
	switch {
	case resume && errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("autotune: nothing to resume in %s: %w", dir, err)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	case !resume && len(past) > 0:
		return nil, fmt.Errorf("autotune: %s already holds a session; resume it (--resume %s) or use another directory", dir, dir)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("autotune: %w", err)
	}
	// One session a directory: a second one (or a second --resume) would
	// interleave its lines with the first's.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("autotune: %s is in use by another session (%w)", dir, err)
	}
	j := &journal{f: f, past: past}
	if err := j.start(o); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

// ReadOptions returns the options the session journaled in dir started
// with (what --resume DIR continues).
func ReadOptions(dir string) (Options, error) {
	past, err := readJournal(filepath.Join(dir, JournalFile))
	if err != nil {
		return Options{}, err
	}
	if len(past) == 0 || past[0].Event != "start" || past[0].Options == nil {
		return Options{}, fmt.Errorf("autotune: %s: the journal does not begin with a session's start", dir)
	}
	return *past[0].Options, nil
}

// readJournal reads every complete line; a torn last line (a crash in
// the middle of a write) is dropped and will be written again.
func readJournal(path string) ([]event, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []event
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			if !bytes.HasSuffix(b, []byte("\n")) && n == bytes.Count(b, []byte("\n"))+1 {
				break // the torn last line
			}
			return nil, fmt.Errorf("autotune: %s line %d: %w", path, n, err)
		}
		out = append(out, e)
	}
	if !bytes.HasSuffix(b, []byte("\n")) && len(b) > 0 {
		if err := os.Truncate(path, int64(bytes.LastIndexByte(b, '\n')+1)); err != nil {
			return nil, fmt.Errorf("autotune: %w", err)
		}
	}
	return out, sc.Err()
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
		return Measurement{}, false, fmt.Errorf("autotune: the journal's event %d is %s %s where the session measures %s: it does not belong to this session", j.next+1, e.Event, e.Config, config)
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
