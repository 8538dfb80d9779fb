package redisadmin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"redline/internal/secret"
	"redline/internal/testutil/respscript"
)

// Issue 24, item 8: a server (anyone's) names a FIFO as its config file;
// the doctor and the root session blocked opening it, for good. It is now
// refused as not a regular file, at once; so is a symlink to a file the
// server's owner could not read.
func TestServerFilesOnlyRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "redis.conf")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	noProc := t.TempDir() // no /proc/PID there: the file is opened by its own name
	if _, err := readConfFile(noProc, 4242, fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a FIFO as the config file: %v", err)
	}
	if _, err := readLogWarnings(noProc, 4242, fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a FIFO as the log: %v", err)
	}
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte("requirepass hunter2\n"), 0o600)
	link := filepath.Join(dir, "link.conf")
	os.Symlink(secret, link)
	if cf, err := readConfFile(noProc, 4242, link); err == nil {
		t.Errorf("a symlink as the config file was read: %+v", cf)
	}
	plain := filepath.Join(dir, "plain.conf")
	os.WriteFile(plain, []byte("maxclients 10\n"), 0o644)
	if cf, err := readConfFile(noProc, 4242, plain); err != nil || cf.Directives["maxclients"] != "10" {
		t.Errorf("a plain config file: %+v, %v", cf, err)
	}
}

// Issue 24, items 4 and 9: CONFIG GET * and the server's redis.conf carry
// its passwords; the facts (a doctor report, a session's reply) hold
// only that one is set.
func TestFactsNeverHoldPasswords(t *testing.T) {
	srv := respscript.Start(t, respscript.Options{Config: map[string]string{"requirepass": "hunter2", "masterauth": "hunter3", "hz": "10",
		"masteruser": "hunter4", "tls-key-file-pass": "hunter5", "tls-client-key-file-pass": "hunter6"}})
	c, err := Dial(context.Background(), Options{Addr: srv.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cfg, err := c.ConfigGet(context.Background(), "*")
	if err != nil {
		t.Fatal(err)
	}
	if cfg["requirepass"] != secret.Marker || cfg["masterauth"] != secret.Marker || cfg["hz"] != "10" || strings.Contains(fmt.Sprint(cfg), "hunter") {
		t.Errorf("CONFIG GET *: %v", cfg)
	}
	conf := filepath.Join(t.TempDir(), "redis.conf")
	os.WriteFile(conf, []byte("requirepass hunter2\nmasterauth hunter3\nhz 10\nmasteruser hunter4\ntls-key-file-pass hunter5\n"+
		"user alice on >hunter7 ~* +@all\nsentinel auth-pass mymaster hunter8\n"), 0o644)
	cf, err := readConfFile(t.TempDir(), 4242, conf)
	if err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprint(cf.Directives); strings.Contains(s, "hunter") {
		t.Errorf("redis.conf directives: %s", s)
	}
}
