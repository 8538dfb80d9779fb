// Package percent is a fraction a YAML file may write either as a
// number (0.03) or a percentage ("3%").
package percent

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Value is a fraction written either as a number (0.03) or a percentage
// ("3%") in a scenario.
type Value float64

// UnmarshalYAML accepts 0.03 and 3%.
func (p *Value) UnmarshalYAML(n *yaml.Node) error {
	s := strings.TrimSpace(n.Value)
	div := 1.0
	if t, ok := strings.CutSuffix(s, "%"); ok {
		s, div = strings.TrimSpace(t), 100
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a fraction or a percentage (0.03 or 3%%)", n.Line, n.Value)
	}
	*p = Value(v / div)
	return nil
}
