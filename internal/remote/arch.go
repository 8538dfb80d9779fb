package remote

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// unameArch maps `uname -m` onto Go's architecture names: the push sends
// the build for the server host's machine, not this one's.
var unameArch = map[string]string{"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64"}

// binaryFor returns the redline binary to push to a host whose `uname -sm`
// is unameSM: path (default: this binary) when the host's architecture is
// this build's, else the build for the host's architecture beside it,
// redline-linux-GOARCH, as make release writes them.
func binaryFor(path, unameSM string) (string, error) {
	f := strings.Fields(unameSM)
	if len(f) != 2 || f[0] != "Linux" {
		return "", fmt.Errorf("the server host's uname -sm is %q: redline runs on Linux only", strings.TrimSpace(unameSM))
	}
	goarch, ok := unameArch[f[1]]
	if !ok {
		return "", fmt.Errorf("the server host is %s: redline is built for amd64 (x86_64) and arm64 (aarch64)", f[1])
	}
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("find this redline's binary: %w", err)
		}
		path = exe
	}
	if goarch == runtime.GOARCH {
		return path, nil
	}
	other := filepath.Join(filepath.Dir(path), "redline-linux-"+goarch)
	if _, err := os.Stat(other); err != nil {
		return "", fmt.Errorf("the server host is %s and this redline is %s: no %s beside it (make release builds it)", f[1], runtime.GOARCH, other)
	}
	return other, nil
}
