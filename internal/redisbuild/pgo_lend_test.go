package redisbuild

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"redline/internal/redisserver"
	"redline/internal/testutil"
)

// Issue 35, item 1, PGO's side: the profile directory lent to the
// server's user came back through a walk by name that only chowned, so
// that user, having made the directory (or one below) writable by all
// while it was theirs, kept writing into it after it was root's again,
// and a FIFO left in it hung the compiler. Now everything comes back
// root's and 0755/0644, and what is not a directory or a regular file is
// removed.
func TestLendProfileDirTakesEverythingBack(t *testing.T) {
	testutil.NeedRoot(t)
	u, err := redisserver.ServerUser()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(testutil.TrustedTempDir(t), "profile")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := testutil.SecretFile(t, "ROOT-ONLY-SECRET-35-1-PGO")
	back, err := lendProfileDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	testutil.RunAs(t, u, "cd "+dir+" && chmod 0777 . && mkdir -m 0777 sub && echo x > a.gcda && chmod 0666 a.gcda"+
		" && mkfifo b.profraw && ln -s "+secret+" c.gcda && echo y > sub/d.gcda && mkfifo sub/e.gcda")
	if err := back(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"b.profraw", "c.gcda", "sub/e.gcda"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s left in the profile directory (%v)", p, err)
		}
	}
	want := map[string]os.FileMode{".": os.ModeDir | 0o755, "sub": os.ModeDir | 0o755, "a.gcda": 0o644, "sub/d.gcda": 0o644}
	for p, mode := range want {
		fi, err := os.Lstat(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != 0 || st.Gid != 0 || fi.Mode() != mode {
			t.Errorf("%s: uid %d gid %d mode %v, want root's and %v", p, st.Uid, st.Gid, fi.Mode(), mode)
		}
	}
	for _, d := range []string{dir, filepath.Join(dir, "sub")} {
		out, err := testutil.TryAs(t, u, "touch "+d+"/late.gcda")
		if err == nil {
			t.Errorf("the server's user still writes %s after it was taken back", d)
		} else if !strings.Contains(out, "ermission denied") {
			t.Errorf("touch %s: %v %s", d, err, out)
		}
	}
}
