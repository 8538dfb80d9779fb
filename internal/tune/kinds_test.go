package tune

import (
	"testing"

	"redline/internal/change"
)

// Every kind change knows has its effects here, and no other.
func TestEveryKindHasEffects(t *testing.T) {
	for _, k := range change.Kinds() {
		ops, ok := kinds[k]
		if !ok || ops.check == nil || ops.read == nil || ops.write == nil {
			t.Errorf("kind %s: no check/read/write in tune", k)
		}
	}
	if len(kinds) != len(change.Kinds()) {
		t.Errorf("tune has %d kinds, change %d", len(kinds), len(change.Kinds()))
	}
}
