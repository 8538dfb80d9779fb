package knobs

import (
	"os"
	"slices"
	"strings"
	"testing"

	"redline/internal/change"
	"redline/internal/redisparam"
	"redline/internal/redisserver"
	"redline/internal/testutil"
	"redline/internal/tune"
)

// TestCatalogValidates holds every knob to the change allow-lists of
// today (change.Change.Validate), whatever they are narrowed to, and
// requires a reason and a source for each.
func TestCatalogValidates(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Catalog() {
		if err := k.Validate(); err != nil {
			t.Error(err)
		}
		if seen[k.Name] {
			t.Errorf("knob %s listed twice", k.Name)
		}
		seen[k.Name] = true
		for _, v := range k.Values {
			if c, ok := k.Change(v); ok {
				if err := c.Validate(); err != nil {
					t.Errorf("knob %s value %q: refused by the change allow-list: %v", k.Name, v, err)
				}
			} else if k.Method() == ByChange {
				t.Errorf("knob %s is applied as a change but makes none", k.Name)
			}
		}
	}
}

// TestProfilesAndAllocatorsExist: knobs that name a tune profile or an
// allocator name one that exists.
func TestProfilesAndAllocatorsExist(t *testing.T) {
	for _, k := range Catalog() {
		switch {
		case k.Method() == ByProfile && !slices.Contains(tune.ProfileNames(), k.Target):
			t.Errorf("knob %s: no tune profile %q (have %v)", k.Name, k.Target, tune.ProfileNames())
		case k.Kind == KindAllocator:
			for _, v := range k.Values {
				if !slices.Contains(redisserver.AllocatorNames(), v) {
					t.Errorf("knob %s: no allocator %q (have %v)", k.Name, v, redisserver.AllocatorNames())
				}
			}
		}
	}
}

func TestSafetyClasses(t *testing.T) {
	for _, k := range Catalog() {
		if k.Kind == KindBoot && k.Safety != Never {
			t.Errorf("knob %s needs a reboot: its class must be never", k.Name)
		}
		if k.Safety == Never && k.Allowed([]string{k.Name}) {
			t.Errorf("knob %s is never allowed, even when named", k.Name)
		}
		if k.Safety == Review && (k.Allowed(nil) || !k.Allowed([]string{k.Name})) {
			t.Errorf("knob %s: review knobs need --allow", k.Name)
		}
	}
}

// TestDocTable: docs/autotune.md shows the catalog as the code has it
// (go test -update rewrites the doc's table).
func TestDocTable(t *testing.T) {
	const path = "../../docs/autotune.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- knobs:begin -->\n", "<!-- knobs:end -->"
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s: no %q ... %q section", path, begin, end)
	}
	want := Markdown()
	if doc[i+len(begin):j] == want {
		return
	}
	if testutil.Updating() {
		if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the knob table differs from the catalog; run go test ./internal/knobs -update", path)
}

// TestRestartKnobsStartLines: every start-up line a restart knob writes
// is one the managed server may be started with (redisparam.CheckLine,
// which the session holds redis.start to), and every restart knob makes a
// start-up change.
func TestRestartKnobsStartLines(t *testing.T) {
	for _, k := range Catalog() {
		if k.Method() != ByServerSpec {
			if _, ok := k.Start("x"); ok {
				t.Errorf("knob %s is applied by %s but makes a start-up change", k.Name, k.Method())
			}
			continue
		}
		if !k.Restart {
			t.Errorf("knob %s changes the start-up spec but does not say it restarts", k.Name)
		}
		for _, v := range k.Values {
			s, ok := k.Start(v)
			if !ok {
				t.Errorf("knob %s makes no start-up change", k.Name)
			}
			if s.ConfigLine != "" {
				if err := redisparam.CheckLine(s.ConfigLine); err != nil {
					t.Errorf("knob %s=%s: %v", k.Name, v, err)
				}
			}
		}
	}
}

// TestForChange: a doctor fix maps onto the knob that makes the same
// change, and a change no knob makes maps onto none.
func TestForChange(t *testing.T) {
	k, ok := ForChange(change.Change{Kind: change.KindRedisConfig, Target: "slowlog-log-slower-than", Value: "10000"})
	if !ok || k.Name != "redis.slowlog-log-slower-than" {
		t.Errorf("slowlog fix: %s, %v", k.Name, ok)
	}
	if k, ok := ForChange(change.Change{Kind: change.KindSysctl, Target: "net.core.rmem_max", Value: "1"}); ok {
		t.Errorf("rmem_max maps onto %s", k.Name)
	}
}

// TestServerBuildKnob: server.build's values are the session's build
// names, each a start-up change of the binary; it is the one knob without
// catalog values.
func TestServerBuildKnob(t *testing.T) {
	k, ok := Lookup("server.build")
	if !ok || !k.SessionValues() || k.Method() != ByServerSpec || !k.Restart {
		t.Fatalf("server.build: %+v", k)
	}
	if s, ok := k.Start("o3"); !ok || s.Build != "o3" || s.ConfigLine != "" {
		t.Errorf("server.build=o3: %+v, %v", s, ok)
	}
	for _, other := range Catalog() {
		if other.SessionValues() != (other.Name == "server.build") {
			t.Errorf("knob %s: session values %v", other.Name, other.SessionValues())
		}
	}
	if !strings.Contains(Markdown(), "--build NAME=SPEC") {
		t.Error("the table does not say where server.build's values come from")
	}
}

// TestRequirementsNameCatalogKnobs: a knob's requirement names a catalog
// knob whose values include its idle one's alternative.
func TestRequirementsNameCatalogKnobs(t *testing.T) {
	for _, k := range Catalog() {
		if k.Requires == nil {
			continue
		}
		dep, ok := Lookup(k.Requires.Knob)
		if !ok || dep.Name == k.Name {
			t.Errorf("%s requires %q: not another catalog knob", k.Name, k.Requires.Knob)
			continue
		}
		if !slices.ContainsFunc(dep.Values, func(v string) bool { return v != k.Requires.Idle }) {
			t.Errorf("%s requires %s other than %s, which it never takes", k.Name, dep.Name, k.Requires.Idle)
		}
	}
}
