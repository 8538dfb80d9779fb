package ansible_test

import (
	"os"
	"testing"

	"go.yaml.in/yaml/v3"
)

type task struct {
	Name  string         `yaml:"name"`
	Copy  map[string]any `yaml:"ansible.builtin.copy"`
	Block []task         `yaml:"block"`
}

func copies(ts []task) []map[string]any {
	var out []map[string]any
	for _, t := range ts {
		if t.Copy != nil {
			out = append(out, t.Copy)
		}
		out = append(out, copies(t.Block)...)
	}
	return out
}

// Issue 35, item 5: the install role copied the binary to its live name
// and checked its checksum after: until the check (and after a failed
// one) the unchecked file was the installed redline. The copy goes to a
// temporary name; only the checked file is renamed into place.
func TestInstallRoleChecksBeforeThePlace(t *testing.T) {
	b, err := os.ReadFile("roles/install/tasks/main.yml")
	if err != nil {
		t.Fatal(err)
	}
	var tasks []task
	if err := yaml.Unmarshal(b, &tasks); err != nil {
		t.Fatal(err)
	}
	cs := copies(tasks)
	if len(cs) == 0 {
		t.Fatal("no copy task")
	}
	for _, c := range cs {
		if c["dest"] == "{{ redline_bin }}" {
			t.Errorf("the binary is copied to its live name before its check: %v", c)
		}
	}
}
