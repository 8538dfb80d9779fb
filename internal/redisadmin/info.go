package redisadmin

// INFO replies look like this (CRLF line ends; "# Name" opens a section):
//
//	# Server
//	redis_version:7.0.15
//	process_id:9726
//	...
//	# Commandstats
//	cmdstat_config|get:calls=3,usec=47,usec_per_call=15.67,rejected_calls=0,failed_calls=0
//	# Keyspace
//	db0:keys=1,expires=0,avg_ttl=0

import (
	"strconv"
	"strings"
)

// Info is a parsed INFO reply: its sections in server order, with typed
// accessors. Getters return (value, ok) so that a field the server does not
// report (older versions, renamed fields) is told apart from a zero.
type Info struct {
	Sections []Section
	// Malformed holds lines that were neither a header nor key:value (at
	// most maxMalformed of them), kept so a caller can report them.
	Malformed []string
	index     map[string]fieldRef
}

// Section is one "# Name" block of an INFO reply.
type Section struct {
	Name   string
	Fields []Field
}

// Field is one key:value line.
type Field struct {
	Key, Value string
}

type fieldRef struct{ section, field int }

const maxMalformed = 16

// ParseInfo parses the text of an INFO reply. It never fails: lines that do
// not parse are collected in Malformed, because a monitoring tool must keep
// working when a module or a newer server adds lines it does not know.
func ParseInfo(text string) *Info {
	info := &Info{index: map[string]fieldRef{}}
	cur := -1
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if name, ok := strings.CutPrefix(line, "#"); ok {
			info.Sections = append(info.Sections, Section{Name: strings.TrimSpace(name)})
			cur = len(info.Sections) - 1
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || k == "" {
			if len(info.Malformed) < maxMalformed {
				info.Malformed = append(info.Malformed, line)
			}
			continue
		}
		if cur < 0 { // fields before any header
			info.Sections = append(info.Sections, Section{})
			cur = 0
		}
		s := &info.Sections[cur]
		s.Fields = append(s.Fields, Field{Key: k, Value: v})
		info.index[k] = fieldRef{cur, len(s.Fields) - 1}
	}
	return info
}

// String renders info back in INFO's own format (with LF line ends).
func (i *Info) String() string {
	var b strings.Builder
	for n, s := range i.Sections {
		if n > 0 {
			b.WriteByte('\n')
		}
		if n > 0 || s.Name != "" || len(s.Fields) == 0 {
			b.WriteString("# " + s.Name + "\n")
		}
		for _, f := range s.Fields {
			b.WriteString(f.Key + ":" + f.Value + "\n")
		}
	}
	return b.String()
}

// Section returns the section called name (case-insensitive).
func (i *Info) Section(name string) (Section, bool) {
	for _, s := range i.Sections {
		if strings.EqualFold(s.Name, name) {
			return s, true
		}
	}
	return Section{}, false
}

// Get returns the value of key from whichever section holds it (INFO keys
// are unique across sections; on a duplicate the last one wins).
func (i *Info) Get(key string) (string, bool) {
	if i == nil {
		return "", false
	}
	r, ok := i.index[key]
	if !ok {
		return "", false
	}
	return i.Sections[r.section].Fields[r.field].Value, true
}

// Int returns key as an integer; ok is false when it is absent or not a number.
func (i *Info) Int(key string) (int64, bool) {
	v, ok := i.Get(key)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// Float returns key as a float (used_cpu_sys, mem_fragmentation_ratio ...).
func (i *Info) Float(key string) (float64, bool) {
	v, ok := i.Get(key)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
	return f, err == nil
}

// CPUSeconds is the CPU time the server process has used
// (used_cpu_sys + used_cpu_user, INFO cpu): the cost side of a benchmark.
func (i *Info) CPUSeconds() float64 {
	sys, _ := i.Float("used_cpu_sys")
	user, _ := i.Float("used_cpu_user")
	return sys + user
}

// Version returns redis_version ("7.0.15"), or "" when absent.
func (i *Info) Version() string {
	v, _ := i.Get("redis_version")
	return v
}

// ClusterEnabled reports whether the server runs in cluster mode (INFO
// cluster: cluster_enabled:1).
func (i *Info) ClusterEnabled() bool {
	v, _ := i.Get("cluster_enabled")
	return v == "1"
}

// ProcessID returns process_id, the server's pid in its own PID namespace.
func (i *Info) ProcessID() (int, bool) {
	n, ok := i.Int("process_id")
	return int(n), ok && n > 0
}

// ParseKV splits a composite value such as
// "calls=1,usec=47,usec_per_call=47.00" or a module line whose values hold
// bracketed lists ("usedby=[],using=[a,b]") into ordered fields. Commas
// inside [] do not split.
func ParseKV(s string) []Field {
	var out []Field
	depth, start := 0, 0
	flush := func(end int) {
		part := s[start:end]
		if part == "" {
			return
		}
		k, v, _ := strings.Cut(part, "=")
		out = append(out, Field{Key: k, Value: v})
	}
	for n := 0; n < len(s); n++ {
		switch s[n] {
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				flush(n)
				start = n + 1
			}
		}
	}
	flush(len(s))
	return out
}

// kvInt returns the integer value of key in fields.
func kvInt(fields []Field, key string) (int64, bool) {
	for _, f := range fields {
		if f.Key == key {
			n, err := strconv.ParseInt(f.Value, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// kvFloat returns the float value of key in fields.
func kvFloat(fields []Field, key string) (float64, bool) {
	for _, f := range fields {
		if f.Key == key {
			n, err := strconv.ParseFloat(f.Value, 64)
			return n, err == nil
		}
	}
	return 0, false
}

func kvString(fields []Field, key string) string {
	for _, f := range fields {
		if f.Key == key {
			return f.Value
		}
	}
	return ""
}
