package change

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

var unitName = regexp.MustCompile(`^[A-Za-z0-9:_.@-]+$`)

func validateService(c Change) error {
	if !unitName.MatchString(c.Target) {
		return errors.New("not a service unit name")
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
