package tune

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"redline/internal/change"
	"redline/internal/resp"
)

// Redis CONFIG SET changes: read with CONFIG GET, written with CONFIG SET,
// compared the way Redis canonicalises values ("1gb" and "1073741824").

func init() {
	registerKind(change.KindRedisConfig, &kindOps{
		check:    checkRedisConfig,
		read:     readRedisConfig,
		write:    writeRedisConfig,
		identity: redisRunID,
	})
}

func checkRedisConfig(ctx context.Context, s *System, c change.Change) error {
	_, err := readRedisConfig(ctx, s, c)
	return err
}

func readRedisConfig(ctx context.Context, s *System, c change.Change) (string, error) {
	conn, err := s.redisConn(ctx, c)
	if err != nil {
		return "", err
	}
	cfg, err := conn.ConfigGet(ctx, c.Target)
	if err != nil {
		return "", fmt.Errorf("read %s on Redis at %s: %w", c.Target, s.redisAddr(c), err)
	}
	if v, ok := cfg.Get(strings.ToLower(c.Target)); ok {
		return v, nil
	}
	if len(cfg) == 1 { // an alias may answer under its other name
		for _, v := range cfg {
			return v, nil
		}
	}
	return "", refuse(fmt.Sprintf("Redis at %s has no config parameter %q (older version, or a typo)", s.redisAddr(c), c.Target), nil)
}

func writeRedisConfig(ctx context.Context, s *System, c change.Change, v string) error {
	conn, err := s.redisConn(ctx, c)
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
	return fmt.Errorf("set %s to %q on Redis at %s: %w", c.Target, v, s.redisAddr(c), err)
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
func redisRunID(ctx context.Context, s *System, c change.Change) (string, error) {
	conn, err := s.redisConn(ctx, c)
	if err != nil {
		return "", err
	}
	info, err := conn.Info(ctx, "server")
	if err != nil {
		return "", fmt.Errorf("Redis at %s: %w", s.redisAddr(c), err)
	}
	id, _ := info.Get("run_id")
	return id, nil
}

// redisRewrite persists the running config to redis.conf on each of nodes
// ("" is the plan's own server, redis.addr).
func redisRewrite(ctx context.Context, s *System, nodes []string) error {
	var errs []error
	for _, n := range nodes {
		c := change.Change{Kind: change.KindRedisConfig, Node: n}
		conn, err := s.redisConn(ctx, c)
		if err == nil {
			if err = conn.ConfigRewrite(ctx); err != nil {
				err = fmt.Errorf("Redis at %s: %w (does the server run from a config file it may write?)", s.redisAddr(c), err)
			}
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// redisNodes lists, once each in order, the servers of the redis-config
// changes in cs ("" for the plan's own server).
func redisNodes(cs []change.Change) []string {
	var out []string
	for _, c := range cs {
		if c.Kind == change.KindRedisConfig && !slices.Contains(out, c.Node) {
			out = append(out, c.Node)
		}
	}
	return out
}
