package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"redline/internal/benchdata"
	"redline/internal/redisadmin"
	"redline/internal/resp"
	"redline/internal/secret"
)

// ErrAuth marks an authentication failure (wrong password, NOAUTH).
var ErrAuth = errors.New("authentication failed")

// FetchServerInfo asks the server about itself before a run, over a
// redisadmin connection: INFO server and memory, CONFIG GET
// save/appendonly/io-threads. A server that answers but refuses CONFIG
// (renamed command, ACL) gives a ServerInfo with ConfigErr set and a nil
// error; an unreachable server or a failed AUTH is an error, worded as
// redis-benchmark words it.
func FetchServerInfo(ctx context.Context, o Options) (benchdata.ServerInfo, error) {
	var info benchdata.ServerInfo
	c, err := redisadmin.Dial(ctx, redisadmin.Options{
		Network: o.Network, Addr: o.Addr, Username: o.User, Password: o.Password, TLS: o.TLS,
		Timeout: cmp.Or(o.Timeout, resp.DefaultTimeout), NetNS: o.NetNS,
	})
	var se *resp.ServerError
	switch {
	case errors.Is(err, redisadmin.ErrAuth) && errors.As(err, &se):
		return info, fmt.Errorf("%w: Node %s replied with error:\n%s (check -a and --user)", ErrAuth, o.Addr, se.Msg)
	case err != nil:
		return info, fmt.Errorf("Could not connect to Redis at %s: %s", o.Addr, capitalise(rootCause(err)))
	}
	defer c.Close()
	if v, err := c.Do(ctx, "INFO", "server"); err == nil {
		parseInfoServer(v.Str, &info)
	}
	if v, err := c.Do(ctx, "INFO", "memory"); err == nil {
		info.Allocator = infoField(v.Str, "mem_allocator")
	}
	v, err := c.Do(ctx, "CONFIG", "GET", "*")
	switch {
	case errors.As(err, &se) && (se.Prefix() == "NOAUTH" || se.Prefix() == "WRONGPASS"):
		return info, fmt.Errorf("%w: Node %s replied with error:\n%s (pass the password with -a, and --user for an ACL user)", ErrAuth, o.Addr, se.Msg)
	case errors.As(err, &se):
		info.ConfigErr = se.Msg
	case err != nil:
		return info, fmt.Errorf("CONFIG GET on %s: %w", o.Addr, err)
	default:
		info.Config = configMap(v)
		info.IOThreads = info.Config["io-threads"]
	}
	return info, nil
}

// configMap keeps the settings a report or a doctor cares about; the whole
// CONFIG GET * reply is a few hundred pairs. Password settings are saved
// redacted.
func configMap(v resp.Value) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(v.Elems); i += 2 {
		m[v.Elems[i].Str] = secret.ConfigValue(v.Elems[i].Str, v.Elems[i+1].Str)
	}
	return m
}

func parseInfoServer(s string, info *benchdata.ServerInfo) {
	info.Version = infoField(s, "redis_version")
	info.Mode = infoField(s, "redis_mode")
	info.OS = infoField(s, "os")
	info.Executable = infoField(s, "executable")
	info.ProcessID, _ = strconv.Atoi(infoField(s, "process_id"))
}

func infoField(s, key string) string {
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), key+":"); ok {
			return v
		}
	}
	return ""
}

func rootCause(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}
