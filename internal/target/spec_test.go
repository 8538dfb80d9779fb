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
