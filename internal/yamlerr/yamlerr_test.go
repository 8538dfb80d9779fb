package yamlerr

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

type spec struct {
	Name    string        `yaml:"name"`
	N       int           `yaml:"n"`
	D       time.Duration `yaml:"d"`
	On      bool          `yaml:"on"`
	Target  struct{ Kind string }
	Items   []struct{ Name string } `yaml:"items"`
	Enabled *bool                   `yaml:"enabled"`
}

func decode(doc string) error {
	var s spec
	d := yaml.NewDecoder(strings.NewReader(doc))
	d.KnownFields(true)
	return Humanize(d.Decode(&s))
}

func TestHumanize(t *testing.T) {
	cases := []struct{ doc, want string }{
		{"n: abc\n", `line 1: "abc" is not a whole number`},
		{"d: 5x\n", `line 1: "5x" is not a duration (such as 30s or 1m30s)`},
		{"on: maybe\n", `line 1: "maybe" is not true or false`},
		{"- a\n", "line 1: found a list, want a mapping (field: value)"},
		{"target: [1]\n", "line 1: found a list, want a mapping (field: value)"},
		{"items: {a: 1}\n", "line 1: found a mapping (field: value), want a list (- item)"},
		{"nmae: x\n", "line 1: field nmae not found"},
		{"n: [\n", "line 1: did not find expected node content"},
		{"n: abc\nd: 1y\n", "line 1: \"abc\" is not a whole number\n  line 2: \"1y\" is not a duration"},
	}
	for _, c := range cases {
		err := decode(c.doc)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v\nwant %s", c.doc, err, c.want)
			continue
		}
		for _, bad := range []string{"!!", "unmarshal", "yamlerr.", "spec", "yaml:"} {
			if strings.Contains(err.Error(), bad) {
				t.Errorf("%q: %q still speaks Go/YAML (%s)", c.doc, err, bad)
			}
		}
	}
	var te *yaml.TypeError
	if !errors.As(decode("n: abc\n"), &te) {
		t.Error("the decoder's error is no longer reachable with errors.As")
	}
	if Humanize(nil) != nil {
		t.Error("Humanize(nil) != nil")
	}
}
