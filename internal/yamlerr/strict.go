package yamlerr

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Strict decodes the YAML document b into v strictly: an unknown field or
// a wrong type is an error that names its line (Humanize); an empty
// document is "empty WHAT". It returns, for the validation that follows,
// where a field is: Line("variants.1.server") is "line 12: " ("" when the
// path is not in the document).
func Strict(b []byte, v any, what string) (Line func(path string) string, err error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("empty %s", what)
		}
		return nil, Humanize(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	return lineFinder(&doc), nil
}

// lineFinder finds a dotted path (map keys, sequence indexes) in doc; the
// deepest node found gives the line.
func lineFinder(doc *yaml.Node) func(string) string {
	return func(path string) string {
		n := doc
		if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
			n = n.Content[0]
		}
		for _, part := range strings.Split(path, ".") {
			next := child(n, part)
			if next == nil {
				break
			}
			n = next
		}
		if n == nil || n.Line == 0 {
			return ""
		}
		return fmt.Sprintf("line %d: ", n.Line)
	}
}

func child(n *yaml.Node, key string) *yaml.Node {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i+1]
			}
		}
	case yaml.SequenceNode:
		var idx int
		if _, err := fmt.Sscanf(key, "%d", &idx); err == nil && idx >= 0 && idx < len(n.Content) {
			return n.Content[idx]
		}
	}
	return nil
}
