package tune

import (
	"bytes"
	"errors"

	"go.yaml.in/yaml/v3"

	"redline/internal/change"
)

// ParseSource decodes a plan or a list of changes (JSON or YAML); ext
// (".json", ".yaml") picks the format as in ParsePlan.
func ParseSource(b []byte, ext string) (*Plan, error) {
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		return nil, errors.New("empty file: nothing to plan from")
	}
	if !isList(trimmed, ext) {
		return ParsePlan(b, ext)
	}
	var changes []change.Change
	if err := decodeList(trimmed, &changes); err != nil {
		return nil, err
	}
	p := FromChanges(changes, "")
	return p, p.Validate()
}

// isList reports whether the document is a bare list of changes.
func isList(b []byte, ext string) bool {
	if isJSON(b, ext) || bytes.HasPrefix(b, []byte("[")) {
		return bytes.HasPrefix(b, []byte("["))
	}
	var n yaml.Node
	return yaml.Unmarshal(b, &n) == nil && len(n.Content) == 1 && n.Content[0].Kind == yaml.SequenceNode
}

func decodeList(b []byte, v *[]change.Change) error {
	if bytes.HasPrefix(b, []byte("[")) {
		return decodeJSONStrict(b, v)
	}
	if err := decodeYAMLStrict(b, v); err != nil {
		return err
	}
	if len(*v) == 0 {
		return errors.New("empty list of changes")
	}
	return nil
}
