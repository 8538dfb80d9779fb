package redisadmin

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"redline/internal/resp"
	"redline/internal/secret"
)

// Config holds parameters from CONFIG GET, by lower-case name. Values are
// as the server prints them: memory sizes in bytes, booleans "yes"/"no",
// "save" as "3600 1 300 100".
type Config map[string]string

// parseConfigReply turns a CONFIG GET reply (a RESP2 flat array of name,
// value pairs or a RESP3 map, which resp.Value also flattens) into a Config.
func parseConfigReply(v resp.Value) (Config, error) {
	if v.IsError() {
		return nil, v.Err()
	}
	if len(v.Elems)%2 != 0 {
		return nil, fmt.Errorf("CONFIG GET reply has %d elements, want name/value pairs", len(v.Elems))
	}
	c := make(Config, len(v.Elems)/2)
	for n := 0; n < len(v.Elems); n += 2 {
		// A password never leaves here: the facts go into reports, the
		// terminal and, through the session, to whoever asked.
		name := strings.ToLower(v.Elems[n].Str)
		c[name] = secret.ConfigValue(name, v.Elems[n+1].Str)
	}
	return c, nil
}

// Get returns a parameter's value.
func (c Config) Get(name string) (string, bool) {
	v, ok := c[name]
	return v, ok
}

// Int returns a numeric parameter (maxmemory, tcp-backlog, io-threads ...).
func (c Config) Int(name string) (int64, bool) {
	v, ok := c[name]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// Bool returns a yes/no parameter; ok is false when absent or not yes/no.
func (c Config) Bool(name string) (value, ok bool) {
	switch c[name] {
	case "yes":
		return true, true
	case "no":
		return false, true
	}
	return false, false
}

// Names returns the parameter names, sorted.
func (c Config) Names() []string {
	out := make([]string, 0, len(c))
	for k := range c {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// SavePoint is one "save <seconds> <changes>" rule.
type SavePoint struct {
	Seconds, Changes int64
}

// SavePoints parses the "save" parameter; an empty list means RDB
// snapshots are off.
func (c Config) SavePoints() []SavePoint {
	f := strings.Fields(c["save"])
	var out []SavePoint
	for n := 0; n+1 < len(f); n += 2 {
		s, err1 := strconv.ParseInt(f[n], 10, 64)
		ch, err2 := strconv.ParseInt(f[n+1], 10, 64)
		if err1 == nil && err2 == nil {
			out = append(out, SavePoint{s, ch})
		}
	}
	return out
}

// Persistent reports whether the server forks for persistence: RDB save
// points or appendonly.
func (c Config) Persistent() bool {
	aof, _ := c.Bool("appendonly")
	return aof || len(c.SavePoints()) > 0
}
