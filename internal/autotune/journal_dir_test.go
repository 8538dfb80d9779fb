package autotune

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 24 item 6 held out (autotune --dir): the session's directory
// was made with MkdirAll, which accepts a link or another user's
// directory (the default name autotune-TIME is predictable in a shared
// directory), and the journal was opened following a link, so a root
// autotune appended its journal to any file a link named. The directory
// is now held to atomicfile.OwnDir and the journal opened O_NOFOLLOW.
func TestJournalDirRefusesPlantedLinks(t *testing.T) {
	base := t.TempDir()
	victim := filepath.Join(base, "victim")
	os.Mkdir(victim, 0o700)
	link := filepath.Join(base, "autotune-20260101-000000")
	os.Symlink(victim, link)
	if j, err := openJournal(link, Options{}, false); err == nil {
		j.f.Close()
		t.Error("a session directory that is a link was accepted")
	}
	dir := filepath.Join(base, "own")
	os.Mkdir(dir, 0o700)
	target := filepath.Join(base, "passwd")
	os.WriteFile(target, []byte("root:x:0:0\n"), 0o644)
	os.Symlink(target, filepath.Join(dir, JournalFile))
	if j, err := openJournal(dir, Options{}, false); err == nil {
		j.f.Close()
		t.Error("a journal that is a link was accepted")
	}
	if b, _ := os.ReadFile(target); !strings.HasPrefix(string(b), "root:x:0:0\n") || len(b) != len("root:x:0:0\n") {
		t.Errorf("the link's target was written: %q", b)
	}
}
