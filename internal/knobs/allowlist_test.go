package knobs

import (
	"testing"

	"redline/internal/change"
)

// Every value of every knob applied as one change passes the allow-lists a
// plan is held to (internal/change, internal/redisparam): autotune's
// plans are applied unattended, and a knob the lists refuse would fail
// there, not here.
func TestCatalogPassesChangeValidation(t *testing.T) {
	for _, k := range Catalog() {
		for _, v := range k.Values {
			c := change.Change{Kind: changeKinds[k.Kind], Target: k.Target, Value: v}
			if c.Kind == "" {
				continue
			}
			if err := c.Validate(); err != nil {
				t.Errorf("%s=%s: %v", k.Name, v, err)
			}
		}
	}
}
