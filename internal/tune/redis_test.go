package tune

import (
	"os"
	"strings"
	"testing"

	"redline/internal/change"
	"redline/internal/redisserver"
	"redline/internal/redistest"
)

func redisSystem(srv *redisserver.Server) *System {
	s := RehearsalSystem(os.TempDir())
	s.Redis = RedisOptions{Addr: srv.Addr()}
	return s
}

func configGet(t *testing.T, srv *redisserver.Server, name string) string {
	t.Helper()
	c := redistest.Client(t, srv)
	v := redistest.Do(t, c, "CONFIG", "GET", name)
	if len(v.Elems) < 2 {
		t.Fatalf("CONFIG GET %s: %+v", name, v)
	}
	return v.Elems[1].Str
}

func redisPlan(srv *redisserver.Server, changes ...change.Change) *Plan {
	return &Plan{Version: 1, Redis: &PlanRedis{Addr: srv.Addr()}, Changes: changes}
}

func TestRedisConfigApplyRollback(t *testing.T) {
	srv := redistest.Start(t)
	before := map[string]string{}
	names := []string{"maxmemory", "maxmemory-policy", "hz", "client-output-buffer-limit", "save"}
	for _, n := range names {
		before[n] = configGet(t, srv, n)
	}
	p := redisPlan(srv,
		change.Change{Kind: change.KindRedisConfig, Target: "maxmemory", Value: "100mb"},
		change.Change{Kind: change.KindRedisConfig, Target: "maxmemory-policy", Value: "ALLKEYS-LRU"},
		change.Change{Kind: change.KindRedisConfig, Target: "hz", Value: "50"},
		// One class only: Redis keeps the others and reads back all three.
		change.Change{Kind: change.KindRedisConfig, Target: "client-output-buffer-limit", Value: "pubsub 64mb 16mb 90"},
		change.Change{Kind: change.KindRedisConfig, Target: "save", Value: "900 1"},
	)
	s := redisSystem(srv)
	defer s.Close()
	state := t.TempDir()
	res, err := Apply(bg, s, p, ApplyOptions{StateDir: state})
	if err != nil || res.Count(StatusApplied) != 5 {
		t.Fatalf("apply: %+v %v", res, err)
	}
	if got := configGet(t, srv, "maxmemory"); got != "104857600" {
		t.Errorf("maxmemory = %s after apply", got)
	}
	if got := configGet(t, srv, "maxmemory-policy"); got != "allkeys-lru" {
		t.Errorf("maxmemory-policy = %s after apply", got)
	}
	if got := configGet(t, srv, "client-output-buffer-limit"); !strings.Contains(got, "pubsub 67108864 16777216 90") {
		t.Errorf("client-output-buffer-limit = %s after apply", got)
	}
	rb, err := Rollback(bg, RollbackOptions{StateDir: state})
	if err != nil || rb.Count(StatusRestored) != 5 {
		t.Fatalf("rollback: %+v %v", rb, err)
	}
	for _, n := range names {
		if got := configGet(t, srv, n); got != before[n] {
			t.Errorf("%s = %q after rollback, want %q", n, got, before[n])
		}
	}
}

func TestRedisImmutableIsRefused(t *testing.T) {
	srv := redistest.Start(t)
	p := redisPlan(srv,
		change.Change{Kind: change.KindRedisConfig, Target: "io-threads", Value: "4"},
		change.Change{Kind: change.KindRedisConfig, Target: "hz", Value: "20"},
	)
	s := redisSystem(srv)
	defer s.Close()
	state := t.TempDir()
	res, err := Apply(bg, s, p, ApplyOptions{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, o := range res.Outcomes {
		reasons[o.Change.Target] = string(o.Status) + ": " + o.Reason
	}
	if !strings.Contains(reasons["io-threads"], "restart Redis") ||
		!strings.HasPrefix(reasons["hz"], "applied") {
		t.Fatalf("outcomes: %v", reasons)
	}
	if _, err := Rollback(bg, RollbackOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
}

// A bad value fails the apply and rolls back what was set before it.
func TestRedisBadValueRollsBack(t *testing.T) {
	srv := redistest.Start(t)
	hz := configGet(t, srv, "hz")
	p := redisPlan(srv,
		change.Change{Kind: change.KindRedisConfig, Target: "hz", Value: "77"},
		change.Change{Kind: change.KindRedisConfig, Target: "maxmemory-policy", Value: "sometimes"},
	)
	s := redisSystem(srv)
	defer s.Close()
	_, err := Apply(bg, s, p, ApplyOptions{StateDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "maxmemory-policy") {
		t.Fatalf("apply with a bad value: %v", err)
	}
	if got := configGet(t, srv, "hz"); got != hz {
		t.Errorf("hz = %s after the failed apply, want %s", got, hz)
	}
}

// CONFIG SET values die with the server; rollback must say so rather than
// set them on the new server.
func TestRedisRestartIsGone(t *testing.T) {
	srv := redistest.Start(t)
	port := srv.Port
	s := redisSystem(srv)
	state := t.TempDir()
	if _, err := Apply(bg, s, redisPlan(srv, change.Change{Kind: change.KindRedisConfig, Target: "hz", Value: "42"}), ApplyOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	srv2 := redistest.StartWith(t, redisserver.Options{Port: port})
	redistest.Do(t, redistest.Client(t, srv2), "CONFIG", "SET", "hz", "42")
	rb, err := Rollback(bg, RollbackOptions{StateDir: state})
	if err != nil || rb.Count(StatusGone) != 1 || !strings.Contains(rb.Outcomes[0].Reason, "restarted") {
		t.Fatalf("rollback after a restart: %+v %v", rb, err)
	}
	if got := configGet(t, srv2, "hz"); got != "42" {
		t.Errorf("rollback touched the new server: hz = %s", got)
	}
}

// With rewrite, the change goes into redis.conf, and rollback rewrites the
// file again with the old value.
func TestRedisRewrite(t *testing.T) {
	srv := redistest.Start(t)
	s := redisSystem(srv)
	defer s.Close()
	p := redisPlan(srv, change.Change{Kind: change.KindRedisConfig, Target: "maxmemory", Value: "123mb"})
	p.Redis.Rewrite = true
	state := t.TempDir()
	if _, err := Apply(bg, s, p, ApplyOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	conf, _ := os.ReadFile(srv.ConfPath)
	if !strings.Contains(string(conf), "maxmemory 123mb") {
		t.Fatalf("redis.conf after apply with rewrite:\n%s", conf)
	}
	if _, err := Rollback(bg, RollbackOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	conf, _ = os.ReadFile(srv.ConfPath)
	if strings.Contains(string(conf), "123mb") {
		t.Fatalf("redis.conf after rollback still has the change:\n%s", conf)
	}
}

func TestRedisConfigAuthenticates(t *testing.T) {
	srv := redistest.Start(t, "user tuner on >tuner-pw ~* &* +@all")
	s := redisSystem(srv)
	s.Redis.User, s.Redis.Password = "tuner", "tuner-pw"
	defer s.Close()
	c := change.Change{Kind: change.KindRedisConfig, Target: "hz", Value: "20"}
	if v, err := readRedisConfig(bg, s, c); err != nil || v == "" {
		t.Fatalf("read hz as tuner: %q, %v", v, err)
	}
	bad := redisSystem(srv)
	bad.Redis.User, bad.Redis.Password = "tuner", "not-the-pw"
	defer bad.Close()
	_, err := readRedisConfig(bg, bad, c)
	if err == nil || strings.Contains(err.Error(), "not-the-pw") {
		t.Errorf("wrong password: %v", err)
	}
}

// Issue 10 item 3: after the applying process and its (temporary) server
// were killed, the server's settings are reported gone and the rollback
// completes, every time, instead of failing on the connection forever.
func TestRedisServerGoneAtRollback(t *testing.T) {
	srv := redistest.Start(t)
	s := redisSystem(srv)
	state := t.TempDir()
	p := redisPlan(srv,
		change.Change{Kind: change.KindRedisConfig, Target: "hz", Value: "42"},
		change.Change{Kind: change.KindRedisConfig, Target: "maxmemory", Value: "100mb"})
	_, err := Apply(bg, s, p, ApplyOptions{StateDir: state, hook: func(step int, at phase) bool { return step == 2 && at == afterDone }})
	if err != errKilled {
		t.Fatalf("apply: %v, want it stopped dead", err)
	}
	s.Close()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	st, err := Journaled(bg, StatusOptions{StateDir: state})
	if err != nil || st.Pending() != 2 || st.Sessions[0].Changes[0].Status != StatusGone {
		t.Fatalf("status: %+v %v", st, err)
	}
	rb, err := Rollback(bg, RollbackOptions{StateDir: state})
	if err != nil || !rb.Archived || rb.Count(StatusGone) != 2 || !strings.Contains(rb.Outcomes[0].Reason, "not running") {
		t.Fatalf("rollback with the server gone: %+v %v", rb, err)
	}
	rb, err = Rollback(bg, RollbackOptions{StateDir: state})
	if err != nil || len(rb.Outcomes) != 0 {
		t.Fatalf("second rollback: %+v %v", rb, err)
	}
}
