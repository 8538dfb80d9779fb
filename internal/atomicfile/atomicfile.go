// Package atomicfile writes a file so that a reader (or a crash) sees
// either the old content or the new, never half of it: the bytes go to a
// temporary file beside the target, are synced, and the temporary file is
// renamed over the target. The one atomic file write of the tree: results,
// --json documents, reports and status files all use it.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write writes data to path atomically with mode perm (0644 when zero). A
// missing parent directory is an error: where results go is the caller's
// decision.
func Write(path string, data []byte, perm os.FileMode) error {
	if perm == 0 {
		perm = 0o644
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	err = writeSync(tmp, data, perm)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func writeSync(f *os.File, data []byte, perm os.FileMode) error {
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	return f.Sync()
}
