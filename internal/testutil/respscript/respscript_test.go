package respscript

import (
	"context"
	"strings"
	"testing"

	"redline/internal/resp"
)

func dial(t *testing.T, s *Server) *resp.Client {
	t.Helper()
	c, err := resp.Dial(context.Background(), resp.DialOptions{Addr: s.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestAnswersHandshakeAndAdmin(t *testing.T) {
	s := Start(t, Options{Password: "pw"})
	c := dial(t, s)
	ctx := context.Background()
	if v, _ := c.Do(ctx, "SET", "k", "v"); !strings.HasPrefix(v.Str, "NOAUTH") {
		t.Errorf("before AUTH: %+v", v)
	}
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"AUTH", "pw"}, "OK"},
		{[]string{"PING"}, "PONG"},
		{[]string{"SELECT", "2"}, "OK"},
		{[]string{"SET", "k", "v"}, "OK"},
		{[]string{"INFO", "server"}, "redis_version:7.2.0"},
	}
	for _, st := range steps {
		v, err := c.Do(ctx, st.args...)
		if err != nil || v.IsError() || !strings.Contains(v.Str, st.want) {
			t.Errorf("%v: %+v, %v; want %q", st.args, v, err, st.want)
		}
	}
	v, err := c.Do(ctx, "CONFIG", "GET", "*")
	if err != nil || len(v.Elems) != 4 {
		t.Errorf("CONFIG GET *: %+v, %v", v, err)
	}
	if s.Count("set") != 2 {
		t.Errorf("Count(set) = %d, want 2", s.Count("set"))
	}
}

func TestScriptErrorCloseAndStall(t *testing.T) {
	s := Start(t, Options{Script: func(r Request) Action {
		switch {
		case r.Cmd == "GET" && r.N == 2:
			return Error("ERR scripted")
		case r.Cmd == "GET" && r.N == 3:
			return Stall()
		case r.Cmd == "GET" && r.N == 4:
			return Close()
		}
		return Reply()
	}})
	ctx := context.Background()
	c := dial(t, s)
	if v, err := c.Do(ctx, "GET", "a"); err != nil || v.IsError() {
		t.Fatalf("first GET: %+v %v", v, err)
	}
	if v, err := c.Do(ctx, "GET", "a"); err != nil || v.Str != "ERR scripted" {
		t.Fatalf("second GET: %+v %v", v, err)
	}
	stalled := make(chan error, 1)
	go func() {
		_, err := c.Do(ctx, "GET", "a")
		stalled <- err
	}()
	<-s.Seen("GET", 3)
	select {
	case err := <-stalled:
		t.Fatalf("stalled GET answered before Release: %v", err)
	default:
	}
	s.Release()
	if err := <-stalled; err != nil {
		t.Fatalf("released GET: %v", err)
	}
	if _, err := c.Do(ctx, "GET", "a"); err == nil {
		t.Fatal("fourth GET answered; want the connection closed")
	}
}
