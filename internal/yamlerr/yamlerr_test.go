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

// TestStrictNamesLines: the one strict decode of the lab's scenarios and
// the workload files: an empty document, an unknown field, and a path's
// line for the validation after it (a sequence index, a path not there).
func TestStrictNamesLines(t *testing.T) {
	type doc struct {
		Name  string `yaml:"name"`
		Items []struct {
			Size int `yaml:"size"`
		} `yaml:"items"`
	}
	var d doc
	if _, err := Strict([]byte(""), &d, "thing"); err == nil || err.Error() != "empty thing" {
		t.Errorf("empty: %v", err)
	}
	if _, err := Strict([]byte("name: a\nnope: 1\n"), &d, "thing"); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("unknown field: %v", err)
	}
	line, err := Strict([]byte("name: a\nitems:\n  - size: 1\n  - size: 2\n"), &d, "thing")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"items.1.size": "line 4: ", "name": "line 1: ", "items.9": "line 3: "} {
		if got := line(path); got != want {
			t.Errorf("line(%q) = %q, want %q", path, got, want)
		}
	}
}
