package tune

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"redline/internal/atomicfile"
	"redline/internal/change"
)

// The journal is one append-only file of JSON lines, journal.jsonl in the
// state directory. Before each write an "intent" record with the old value
// is appended and fsynced; after the read-back a "done" record holds the
// value read back. Rollback reads the file, walks the changes backwards and
// appends what it did. When nothing is left to undo, the file moves to
// history/. A crash at any point leaves a journal rollback can finish:
// an intent without a "done" is compared with the live value to learn
// whether the write happened.

// DefaultStateDir is where the journal lives unless told otherwise.
const DefaultStateDir = "/var/lib/redline"

const (
	journalName = "journal.jsonl"
	lockName    = "lock"
	historyDir  = "history"
)

// Record operations.
const (
	opBegin         = "begin"    // an apply session starts
	opIntent        = "intent"   // about to write: change, old value (fsynced first)
	opDone          = "done"     // written and read back
	opRefused       = "refused"  // not written: report-only, with the reason
	opFailed        = "failed"   // the write or its read-back failed
	opCommit        = "commit"   // the apply session finished
	opAbort         = "abort"    // the apply session failed and undid itself
	opRestored      = "restored" // rollback put the old value back (or found it back)
	opDrift         = "drift"    // rollback left a value someone else changed
	opGone          = "gone"     // the value is gone with a reboot, restart or exit
	opRestoreFailed = "restore-failed"
)

// record is one journal line.
type record struct {
	Op      string            `json:"op"`
	Session string            `json:"session"`
	Seq     int               `json:"seq,omitempty"`
	Time    time.Time         `json:"time"`
	Change  *change.Change    `json:"change,omitempty"`
	Old     *string           `json:"old,omitempty"`
	Aux     map[string]string `json:"aux,omitempty"`
	Ident   string            `json:"ident,omitempty"`
	Applied *string           `json:"applied,omitempty"`
	Detail  string            `json:"detail,omitempty"`
	Begin   *SessionInfo      `json:"begin,omitempty"`
	// NetNS is, on an intent, the network namespace the write happens in.
	NetNS *NetNSRef `json:"netns,omitempty"`
}

// SessionInfo is what an apply session records about the machine so a
// later rollback knows what a reboot or restart has undone.
type SessionInfo struct {
	Hostname string `json:"hostname,omitempty"`
	BootID   string `json:"boot_id,omitempty"`
	Root     string `json:"root"`
	// Live is true when Root holds the kernel's own files (a sysfs
	// mounted elsewhere), not a rehearsal copy: rollback writes them as
	// the kernel's, not through simfs.
	Live bool `json:"live,omitempty"`
	// NetNS is the network namespace the session's changes were made in
	// (nil on a rehearsal tree and in journals of older redlines).
	NetNS   *NetNSRef     `json:"netns,omitempty"`
	Redis   *RedisOptions `json:"redis,omitempty"`
	Rewrite bool          `json:"rewrite,omitempty"`
	Sources []string      `json:"sources,omitempty"`
	Version string        `json:"version,omitempty"`
}

// journal is an open, locked journal file.
type journal struct {
	dir  string
	f    *os.File
	lock *os.File
	buf  bytes.Buffer
}

// openJournal locks the state directory and opens its journal for
// appending, creating both as needed. Only one redline may hold it.
func openJournal(dir string) (*journal, error) {
	if err := atomicfile.OwnDir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state %w (pass --state-dir to use another)", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state directory: %w (pass --state-dir to use another)", err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("state directory %s is in use by another redline tune (wait for it to finish): %w", dir, err)
	}
	path := filepath.Join(dir, journalName)
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("open journal: %w", err)
	}
	j := &journal{dir: dir, f: f, lock: lock}
	if err := repairTail(path); err != nil {
		j.close()
		return nil, err
	}
	if errors.Is(statErr, os.ErrNotExist) {
		// A new file's name is durable only once its directory is synced.
		if err := syncDir(dir); err != nil {
			j.close()
			return nil, err
		}
	}
	return j, nil
}

// repairTail cuts a torn last line left by a crash, so the next record
// starts on a line of its own.
func repairTail(path string) error {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 || b[len(b)-1] == '\n' {
		return err
	}
	keep := bytes.LastIndexByte(b, '\n') + 1
	if err := os.Truncate(path, int64(keep)); err != nil {
		return fmt.Errorf("repair torn journal line: %w", err)
	}
	return nil
}

// append writes r as one line; with sync it is on disk when append returns.
func (j *journal) append(r record, sync bool) error {
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	j.buf.Reset()
	if err := json.NewEncoder(&j.buf).Encode(r); err != nil {
		return err
	}
	if _, err := j.f.Write(j.buf.Bytes()); err != nil {
		return fmt.Errorf("write journal %s: %w (nothing was changed after this point)", j.f.Name(), err)
	}
	if sync {
		if err := j.f.Sync(); err != nil {
			return fmt.Errorf("fsync journal %s: %w", j.f.Name(), err)
		}
	}
	return nil
}

// close releases the journal and its lock, as process exit would.
func (j *journal) close() error {
	err := j.f.Close()
	j.lock.Close()
	return err
}

// archive moves a journal with nothing left to undo to history/.
func (j *journal) archive(session string) error {
	if err := j.f.Sync(); err != nil {
		return err
	}
	hist := filepath.Join(j.dir, historyDir)
	if err := os.MkdirAll(hist, 0o700); err != nil {
		return err
	}
	name := fmt.Sprintf("%s-%s.jsonl", session, time.Now().UTC().Format("20060102T150405.000000000"))
	if err := os.Rename(filepath.Join(j.dir, journalName), filepath.Join(hist, name)); err != nil {
		return fmt.Errorf("archive journal: %w", err)
	}
	if err := syncDir(hist); err != nil {
		return err
	}
	return syncDir(j.dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}

// readRecords reads a journal. A torn last line (a crash in the middle of
// an append) is dropped: its write had not started, since every write
// waits for its intent to be on disk. A bad line anywhere else is an error.
func readRecords(dir string) ([]record, error) {
	f, err := os.Open(filepath.Join(dir, journalName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	defer f.Close()
	return parseRecords(f, f.Name())
}

func parseRecords(r io.Reader, name string) ([]record, error) {
	var out []record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	var bad error
	line := 0
	for sc.Scan() {
		line++
		if bad != nil {
			return nil, bad
		}
		var rec record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || rec.Op == "" || rec.Session == "" {
			bad = fmt.Errorf("journal %s line %d is damaged (%v); fix or remove the line, then run rollback again", name, line, err)
			continue
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read journal %s: %w", name, err)
	}
	return out, nil
}
