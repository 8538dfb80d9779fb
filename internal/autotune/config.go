package autotune

import (
	"slices"
	"strings"
)

// Setting is one knob at one value.
type Setting struct {
	Knob  string `json:"knob"`
	Value string `json:"value"`
}

// Config is a set of settings, at most one per knob, sorted by knob: the
// baseline is the empty Config (the target as found).
type Config []Setting

// With is c with s, replacing c's setting of the same knob.
func (c Config) With(s Setting) Config {
	out := slices.DeleteFunc(slices.Clone(c), func(x Setting) bool { return x.Knob == s.Knob })
	out = append(out, s)
	slices.SortFunc(out, func(a, b Setting) int { return strings.Compare(a.Knob, b.Knob) })
	return out
}

// Value returns c's value for knob.
func (c Config) Value(knob string) (string, bool) {
	for _, s := range c {
		if s.Knob == knob {
			return s.Value, true
		}
	}
	return "", false
}

// String is the config in one line: "redis.hz=50 redis.slowlog-log-slower-than=10000",
// "baseline" for none.
func (c Config) String() string {
	if len(c) == 0 {
		return "baseline"
	}
	parts := make([]string, len(c))
	for i, s := range c {
		parts[i] = s.Knob + "=" + s.Value
	}
	return strings.Join(parts, " ")
}
