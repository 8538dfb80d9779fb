package remote

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestBinaryFor(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "redline")
	os.WriteFile(self, []byte("x"), 0o755)
	other := map[string]string{"amd64": "aarch64", "arm64": "x86_64"}[runtime.GOARCH]
	same := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
	if same == "" {
		t.Skip("built for " + runtime.GOARCH)
	}
	if got, err := binaryFor(self, "Linux "+same+"\n"); err != nil || got != self {
		t.Fatalf("same machine: %q, %v; want this binary", got, err)
	}
	if _, err := binaryFor(self, "Linux "+other); err == nil || !strings.Contains(err.Error(), "make release") {
		t.Fatalf("other machine without its build: %v; want an error naming make release", err)
	}
	goarch := unameArch[other]
	want := filepath.Join(dir, "redline-linux-"+goarch)
	os.WriteFile(want, []byte("y"), 0o755)
	if got, err := binaryFor(self, "Linux "+other); err != nil || got != want {
		t.Fatalf("other machine: %q, %v; want %s", got, err, want)
	}
	for _, bad := range []string{"Darwin arm64", "Linux riscv64", ""} {
		if _, err := binaryFor(self, bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
