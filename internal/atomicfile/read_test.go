package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadRegularRefusesWhatIsNotItsFile: a link, a FIFO (no hang), a
// directory and a file over the limit are refused; a regular file is read.
func TestReadRegularRefusesWhatIsNotItsFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "state.json")
	if err := os.WriteFile(good, []byte(`{"id":"a"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadRegular(good, 64); err != nil || string(b) != `{"id":"a"}` {
		t.Fatalf("regular file: %q, %v", b, err)
	}
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte("x"), 0o600)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{link: "symbolic link", fifo: "not a regular file", dir: "not a regular file", good: "more than the 4"} {
		limit := int64(64)
		if name == good {
			limit = 4
		}
		if _, err := ReadRegular(name, limit); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", name, err, want)
		}
	}
}
