package autotune

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 35, item 2: --resume read the journal (unbounded, following a
// link, blocking on a FIFO) and cut its torn last line before checking
// the directory: a link in another user's directory truncated a root
// file, a FIFO hung root. The directory is now checked first and the
// journal opened without following links or blocking, a regular file
// only.
func TestResumeJournalRefusesLinksAndFIFOs(t *testing.T) {
	base := t.TempDir()
	victim := filepath.Join(base, "victim")
	const content = "root:x:0:0:no newline at the end"
	os.WriteFile(victim, []byte(content), 0o600)

	linked := filepath.Join(base, "linked")
	os.Mkdir(linked, 0o700)
	os.Symlink(victim, filepath.Join(linked, JournalFile))
	fifo := filepath.Join(base, "fifo")
	os.Mkdir(fifo, 0o700)
	if err := syscall.Mkfifo(filepath.Join(fifo, JournalFile), 0o600); err != nil {
		t.Fatal(err)
	}
	dirs := []string{linked, fifo}
	if os.Geteuid() == 0 { // another user's directory, a link in it
		other := filepath.Join(base, "other")
		os.Mkdir(other, 0o700)
		os.Symlink(victim, filepath.Join(other, JournalFile))
		os.Lchown(filepath.Join(other, JournalFile), 65534, 65534)
		os.Chown(other, 65534, 65534)
		dirs = append(dirs, other)
	}
	for _, dir := range dirs {
		done := make(chan error, 2)
		go func() {
			_, err := ReadOptions(dir)
			done <- err
			j, err := openJournal(dir, Options{}, true)
			if err == nil {
				j.close()
			}
			done <- err
		}()
		for i := 0; i < 2; i++ {
			select {
			case err := <-done:
				if err == nil {
					t.Errorf("%s: resumed", filepath.Base(dir))
				}
			case <-time.After(30 * time.Second): // a guard, not a bound: the open must not block at all
				t.Fatalf("%s: resuming blocks", filepath.Base(dir))
			}
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != content {
		t.Errorf("the link's target was changed: %q", b)
	}
}

// A journal's lines are input: an unknown event, a second start, a
// measurement out of range are refused.
func TestReadJournalChecksEvents(t *testing.T) {
	for name, text := range map[string]string{
		"unknown":     `{"event":"start","options":{"seed":1}}` + "\n" + `{"event":"exec"}` + "\n",
		"two starts":  `{"event":"start","options":{"seed":1}}` + "\n" + `{"event":"start","options":{"seed":1}}` + "\n",
		"no start":    `{"event":"measure","config":"x","value":1}` + "\n",
		"negative":    `{"event":"start","options":{"seed":1}}` + "\n" + `{"event":"measure","config":"x","value":-1}` + "\n",
		"not options": `{"event":"start"}` + "\n",
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, JournalFile), []byte(text), 0o600)
		if _, err := ReadOptions(dir); err == nil || !strings.Contains(err.Error(), "line") && !strings.Contains(err.Error(), "begin") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
