package tune

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"redline/internal/resp"
)

// Redis CONFIG SET changes: read with CONFIG GET, written with CONFIG SET,
// compared the way Redis canonicalises values ("1gb" and "1073741824").

func init() {
	registerKind(KindRedisConfig, &kindOps{
		validate: validateRedisConfig,
		check:    checkRedisConfig,
		read:     readRedisConfig,
		write:    writeRedisConfig,
		same:     sameRedisValue,
		identity: redisRunID,
		lostOn:   "Redis restart (unless written to redis.conf with CONFIG REWRITE)",
	})
}

func validateRedisConfig(c Change) error {
	if c.Target == "" || strings.ContainsAny(c.Target, " \t\r\n*?") {
		return errors.New("not a Redis config parameter name (one word, no wildcards)")
	}
	return nil
}

func checkRedisConfig(ctx context.Context, s *System, c Change) error {
	_, err := readRedisConfig(ctx, s, c)
	return err
}

func readRedisConfig(ctx context.Context, s *System, c Change) (string, error) {
	conn, err := s.redisConn(ctx)
	if err != nil {
		return "", err
	}
	cfg, err := conn.ConfigGet(ctx, c.Target)
	if err != nil {
		return "", fmt.Errorf("read %s on Redis at %s: %w", c.Target, s.Redis.Addr, err)
	}
	if v, ok := cfg.Get(strings.ToLower(c.Target)); ok {
		return v, nil
	}
	if len(cfg) == 1 { // an alias may answer under its other name
		for _, v := range cfg {
			return v, nil
		}
	}
	return "", refuse(fmt.Sprintf("Redis at %s has no config parameter %q (older version, or a typo)", s.Redis.Addr, c.Target), nil)
}

func writeRedisConfig(ctx context.Context, s *System, c Change, v string) error {
	conn, err := s.redisConn(ctx)
	if err != nil {
		return err
	}
	err = conn.ConfigSet(ctx, c.Target, v)
	if err == nil {
		return nil
	}
	var se *resp.ServerError
	if errors.As(err, &se) && immutable(se.Msg) {
		return refuse(fmt.Sprintf("Redis cannot change %s at run time; set it in redis.conf and restart Redis", c.Target), err)
	}
	return fmt.Errorf("set %s to %q on Redis at %s: %w", c.Target, v, s.Redis.Addr, err)
}

// immutable recognises Redis's refusals of parameters that only a restart
// changes (io-threads, tcp-backlog) or that are protected
// (enable-protected-configs).
func immutable(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "immutable") || strings.Contains(m, "protected config")
}

// redisRunID identifies the server process: after a restart the run_id
// changes, and CONFIG SET values are gone unless they were rewritten.
func redisRunID(ctx context.Context, s *System, _ Change) (string, error) {
	conn, err := s.redisConn(ctx)
	if err != nil {
		return "", err
	}
	info, err := conn.Info(ctx, "server")
	if err != nil {
		return "", fmt.Errorf("Redis at %s: %w", s.Redis.Addr, err)
	}
	id, _ := info.Get("run_id")
	return id, nil
}

// redisRewrite persists the running config to redis.conf.
func redisRewrite(ctx context.Context, s *System) error {
	conn, err := s.redisConn(ctx)
	if err != nil {
		return err
	}
	if err := conn.ConfigRewrite(ctx); err != nil {
		return fmt.Errorf("Redis at %s: %w (does the server run from a config file it may write?)", s.Redis.Addr, err)
	}
	return nil
}

func sameRedisValue(c Change, a, b string) bool {
	if redisNormal(a) == redisNormal(b) {
		return true
	}
	if c.Target == "client-output-buffer-limit" {
		return sameClassLimits(a, b)
	}
	return false
}

// sameClassLimits compares client-output-buffer-limit values class by
// class: CONFIG SET of one class leaves the others, so "normal 0 0 0"
// reads back with the slave and pubsub limits appended.
func sameClassLimits(a, b string) bool {
	x, okA := classLimits(a)
	y, okB := classLimits(b)
	if !okA || !okB {
		return false
	}
	small, big := x, y
	if len(small) > len(big) {
		small, big = big, small
	}
	for class, lim := range small {
		if big[class] != lim {
			return false
		}
	}
	return true
}

func classLimits(v string) (map[string]string, bool) {
	f := strings.Fields(redisNormal(v))
	if len(f)%4 != 0 {
		return nil, false
	}
	out := map[string]string{}
	for i := 0; i < len(f); i += 4 {
		class := f[i]
		if class == "replica" {
			class = "slave"
		}
		out[class] = strings.Join(f[i+1:i+4], " ")
	}
	return out, true
}

// redisNormal is the form Redis stores a value in: lower case, single
// spaces, memory sizes in bytes ("1gb" -> "1073741824", "1k" -> "1000", as
// in Redis's memtoull).
func redisNormal(v string) string {
	fields := strings.Fields(strings.ToLower(v))
	for i, f := range fields {
		if n, ok := memBytes(f); ok {
			fields[i] = strconv.FormatUint(n, 10)
		}
	}
	return strings.Join(fields, " ")
}

var memUnits = []struct {
	suffix string
	mult   uint64
}{
	{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30},
	{"k", 1000}, {"m", 1000 * 1000}, {"g", 1000 * 1000 * 1000},
	{"b", 1},
}

func memBytes(f string) (uint64, bool) {
	for _, u := range memUnits {
		num, ok := strings.CutSuffix(f, u.suffix)
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(num, 10, 64)
		return n * u.mult, err == nil
	}
	return 0, false
}
