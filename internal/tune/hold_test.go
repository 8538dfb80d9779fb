package tune

import (
	"strings"
	"testing"
)

func TestHoldStateDirRefusesASecondHolder(t *testing.T) {
	dir := t.TempDir()
	h, err := HoldStateDir(dir, "redline lab")
	if err != nil {
		t.Fatal(err)
	}
	_, err = HoldStateDir(dir, "redline lab")
	if err == nil {
		t.Fatal("a second hold of the same state directory was granted")
	}
	for _, want := range []string{dir, "redline lab (pid", "--state-dir"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// The journal (tune apply from inside the holder) is not blocked by the hold.
	j, err := openJournal(dir)
	if err != nil {
		t.Fatalf("journal under a hold: %v", err)
	}
	j.close()
	h.Release()
	h2, err := HoldStateDir(dir, "redline lab")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	h2.Release()
}
