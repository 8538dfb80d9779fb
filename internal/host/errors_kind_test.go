package host

import (
	"encoding/json"
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"testing"

	"redline/internal/testutil"
)

// A file that does not parse is a *ParseError in the snapshot's errors,
// found with errors.As, also after the snapshot is saved and read back
// (as a session sends it); a refused one is fs.ErrPermission; neither is
// told from the other by its message. (netutils-igb-ixgbe-2socket with a
// garbled /proc/interrupts line.)
func TestSourceErrorKinds(t *testing.T) {
	dir := testutil.CopyTree(t, "../../testdata/hosts/netutils-igb-ixgbe-2socket")
	path := filepath.Join(dir, "proc/interrupts")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// the message mentions a permission: only the type may decide
	data = append(data, []byte("permission denied: not an IRQ line\n")...)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fsys, err := NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := Read(fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	var back Snapshot
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Snapshot{snap, &back} {
		e := findSourceError(s, "interrupts")
		if e == nil {
			t.Fatalf("no interrupts error: %+v", s.Errors)
		}
		var pe *ParseError
		if !errors.As(e.Err(), &pe) || e.Kind != KindParse || e.Refused() || pe.Line == 0 {
			t.Errorf("%+v: not a parse error with its line", e)
		}
	}
	refused := sourceError("interrupts", permissionHint(&iofs.PathError{Op: "open", Path: "/proc/interrupts", Err: iofs.ErrPermission}))
	var pe *ParseError
	if !refused.Refused() || errors.As(refused.Err(), &pe) || refused.Kind != KindPermission {
		t.Errorf("%+v: not a refusal", refused)
	}
	// A snapshot saved before Kind: a line means a parse error.
	old := SourceError{Source: "interrupts", Path: "/proc/interrupts", Line: 3, Error: "IRQ 30 has 2 counts"}
	if !errors.As(old.Err(), &pe) {
		t.Errorf("%+v: not a parse error", old)
	}
}

func findSourceError(s *Snapshot, source string) *SourceError {
	for i := range s.Errors {
		if s.Errors[i].Source == source {
			return &s.Errors[i]
		}
	}
	return nil
}
