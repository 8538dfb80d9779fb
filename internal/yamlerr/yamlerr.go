// Package yamlerr rewrites the YAML decoder's errors in the terms of the
// person who wrote the file: "line 2: "abc" is not a whole number" rather
// than "cannot unmarshal !!str `abc` into int", and never a Go type name
// such as labdata.Scenario. Scenario files and tune plans use it.
package yamlerr

import (
	"regexp"
	"strings"
)

var (
	withValue = regexp.MustCompile("cannot unmarshal !!(\\w+) `([^`]*)` into (\\S+)")
	noValue   = regexp.MustCompile(`cannot unmarshal !!(\w+) into (\S+)`)
	notFound  = regexp.MustCompile(`field (\S+) not found in type \S+`)
)

// tags names YAML's node tags as a reader knows them.
var tags = map[string]string{"seq": "a list", "map": "a mapping (field: value)", "str": "text", "int": "a number",
	"float": "a number", "bool": "true or false", "null": "nothing", "binary": "binary data", "timestamp": "a date"}

// Humanize returns err with its message rewritten; errors.Is and As still
// see the decoder's error. nil stays nil.
func Humanize(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	msg = strings.Replace(msg, "yaml: unmarshal errors:\n  ", "", 1)
	msg = strings.ReplaceAll(msg, "yaml: ", "")
	msg = withValue.ReplaceAllStringFunc(msg, func(m string) string {
		p := withValue.FindStringSubmatch(m)
		return `"` + p[2] + `" is not ` + want(p[3])
	})
	msg = noValue.ReplaceAllStringFunc(msg, func(m string) string {
		p := noValue.FindStringSubmatch(m)
		return "found " + tag(p[1]) + ", want " + want(p[2])
	})
	msg = notFound.ReplaceAllString(msg, "field $1 not found")
	if msg == err.Error() {
		return err
	}
	return &humanError{msg: msg, err: err}
}

func tag(t string) string {
	if s, ok := tags[t]; ok {
		return s
	}
	return t
}

// want names what a Go type accepts.
func want(goType string) string {
	t := strings.TrimLeft(goType, "*")
	switch {
	case t == "time.Duration":
		return "a duration (such as 30s or 1m30s)"
	case strings.HasPrefix(t, "[]"):
		return "a list (- item)"
	case strings.HasPrefix(t, "map[") || strings.HasPrefix(t, "struct") || strings.Contains(t, "."):
		return "a mapping (field: value)"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "a whole number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "bool":
		return "true or false"
	case t == "string":
		return "text"
	}
	return "a " + t
}

type humanError struct {
	msg string
	err error
}

func (e *humanError) Error() string { return e.msg }
func (e *humanError) Unwrap() error { return e.err }
