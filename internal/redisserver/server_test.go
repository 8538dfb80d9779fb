package redisserver_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"redline/internal/redisserver"
	"redline/internal/redistest"
)

func TestStartAnswersAndStopRemovesDir(t *testing.T) {
	ctx := context.Background()
	s, err := redisserver.Start(ctx, redisserver.Options{Config: []string{"maxclients 321"}, Unix: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Client(ctx)
	if err != nil {
		s.Stop()
		t.Fatal(err)
	}
	v, err := c.Do(ctx, "CONFIG", "GET", "maxclients")
	c.Close()
	if err != nil || len(v.Elems) != 2 || v.Elems[1].Str != "321" {
		s.Stop()
		t.Fatalf("CONFIG GET maxclients = %+v, %v; want 321", v, err)
	}
	if _, err := os.Stat(s.Socket); err != nil {
		t.Errorf("unix socket: %v", err)
	}
	dir := s.Dir
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("dir %s still exists after Stop: %v", dir, err)
	}
	select {
	case <-s.Exited():
	default:
		t.Error("process still running after Stop")
	}
}

func TestStartBadConfigQuotesLog(t *testing.T) {
	_, err := redisserver.Start(context.Background(), redisserver.Options{Config: []string{"no-such-directive yes"}})
	if err == nil {
		t.Fatal("want an error for a bad config line")
	}
	if !strings.Contains(err.Error(), "no-such-directive") {
		t.Errorf("error does not quote the server's complaint: %v", err)
	}
}

func TestMissingBinary(t *testing.T) {
	_, err := redisserver.Start(context.Background(), redisserver.Options{Binary: "/nonexistent/redis-server"})
	if err == nil || !strings.Contains(err.Error(), "apt-get install") {
		t.Fatalf("want a not-found error telling how to install, got %v", err)
	}
}

func TestRedistestHarness(t *testing.T) {
	s := redistest.Start(t, "databases 4")
	c := redistest.Client(t, s)
	if v := redistest.Do(t, c, "SELECT", "3"); v.IsError() {
		t.Fatalf("SELECT 3: %s", v.Str)
	}
	if v := redistest.Do(t, c, "SELECT", "4"); !v.IsError() {
		t.Fatalf("SELECT 4 on a 4-database server should fail, got %+v", v)
	}
}
