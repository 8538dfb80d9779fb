package change

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

var unitName = regexp.MustCompile(`^[A-Za-z0-9:_.@-]+$`)

// allowedUnits are the systemd units a plan may start or stop (with or
// without ".service"): a plan read from someone else's file must not stop
// sshd or start debug-shell.service or modprobe@X.service as root.
var allowedUnits = map[string]bool{"irqbalance": true, "tuned": true}

// AllowedUnits lists the units a service change may name, sorted.
func AllowedUnits() []string { return slices.Sorted(maps.Keys(allowedUnits)) }

func validateService(c Change) error {
	if !unitName.MatchString(c.Target) {
		return errors.New("not a service unit name")
	}
	if !allowedUnits[strings.TrimSuffix(c.Target, ".service")] {
		return fmt.Errorf("unit %q is not one tune starts or stops (%s: the daemons that move IRQs or retune the host under a measurement)", c.Target, strings.Join(AllowedUnits(), ", "))
	}
	if c.Value != "active" && c.Value != "inactive" {
		return fmt.Errorf("value %q must be active or inactive", c.Value)
	}
	return nil
}

// ServiceState folds systemd's transitional states into the two a change
// can ask for: "active" or "inactive".
func ServiceState(v string) string {
	switch strings.TrimSpace(v) {
	case "active", "activating", "reloading", "refreshing":
		return "active"
	}
	return "inactive"
}
