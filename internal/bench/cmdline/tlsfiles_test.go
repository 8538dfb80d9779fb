package cmdline

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Issue 35, item 4: a scenario's workload line names the TLS files, and
// --cacert /dev/zero was read until memory ran out; a FIFO hung the run.
// Each is now refused, naming the file.
func TestTLSFilesMustBeRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"redline bench --tls --cacert /dev/zero -n 1",
		"redline bench --tls --cacert " + fifo + " -n 1",
		"redline bench --tls --insecure --cert /dev/zero --key /dev/zero -n 1",
		"redline bench --tls --insecure --cert " + fifo + " --key " + fifo + " -n 1",
	} {
		_, err := ParseWorkload(line)
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%q: %v; want the file refused", line, err)
		}
	}
}
