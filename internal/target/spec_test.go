package target

import (
	"strings"
	"testing"

	"redline/internal/knobs"
)

func TestAutotuneCandidatesFollowSafetyAndMethod(t *testing.T) {
	cands, untested := Candidates(Spec{Allow: []string{"redis.appendfsync"}})
	names := map[string]bool{}
	for _, c := range cands {
		names[c.Knob] = true
		k, _ := knobs.Lookup(c.Knob)
		if k.Method() == knobs.NotApplied || k.Safety == knobs.Never || !k.Allowed([]string{"redis.appendfsync"}) {
			t.Errorf("candidate %s: method %s, class %s", k.Name, k.Method(), k.Safety)
		}
	}
	if !names["redis.appendfsync"] || names["redis.save"] || !names["redis.hz"] || !names["redis.io-threads"] || !names["profile.redis-config"] {
		t.Errorf("candidates %v: want the allowed review knob, no other, and the safe ones (start-up and profile knobs too)", names)
	}
	if !strings.Contains(strings.Join(untested, "\n"), "steer: review class") {
		t.Errorf("untested:\n%s", strings.Join(untested, "\n"))
	}
}

// TestEveryKnobHasAMethod: every knob of the catalog that autotune
// applies has its method's entry (methods.go), a start-up knob its
// kind's entry too, so a new kind without one fails here, not in a
// session; a knob never applied has none.
func TestEveryKnobHasAMethod(t *testing.T) {
	for _, k := range knobs.Catalog() {
		_, ok := methodOf(k)
		if want := k.Method() != knobs.NotApplied; ok != want {
			t.Errorf("knob %s (kind %s, method %s): entry %v, want %v", k.Name, k.Kind, k.Method(), ok, want)
		}
	}
}
