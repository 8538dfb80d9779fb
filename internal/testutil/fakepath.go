package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// FakesOnPath puts fake programs named names first on PATH, in a
// world-writable directory (a user's directory on root's PATH, as
// sudo -E or a root shell that kept a user's PATH gives): each fake
// leaves NAME.ran beside it and fails. FakeRan reports the ones that
// ran; a root redline must run none of them.
func FakesOnPath(t testing.TB, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Dir(dir), 0o755) // the test's own temporary root: a server's user reaches the fakes
	for _, n := range names {
		script := "#!/bin/sh\ntouch " + filepath.Join(dir, n+".ran") + "\nexit 1\n"
		if err := os.WriteFile(filepath.Join(dir, n), []byte(script), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	return dir
}

// FakeRan fails the test if any fake of dir (FakesOnPath) ran.
func FakeRan(t testing.TB, dir string) {
	t.Helper()
	ran, _ := filepath.Glob(filepath.Join(dir, "*.ran"))
	if len(ran) > 0 {
		t.Errorf("a program from the PATH's user-writable directory ran as root: %v", ran)
	}
}
