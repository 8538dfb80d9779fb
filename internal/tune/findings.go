package tune

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"redline/internal/change"
)

// doctorReport is the part of `redline doctor --json` a plan needs. It is
// decoded leniently (the report has much more), so tune does not import
// doctor: findings carry tune.Change values, which decode as themselves.
type doctorReport struct {
	Target struct {
		Redis string `json:"redis"`
	} `json:"target"`
	Findings []struct {
		ID       string `json:"id"`
		Severity string `json:"severity"`
		Status   string `json:"status"`
		Fix      *struct {
			Changes           []change.Change `json:"changes"`
			Caution           string          `json:"caution"`
			NeedsRedisRestart bool            `json:"needs_redis_restart"`
			Advice            []string        `json:"advice"`
		} `json:"fix"`
	} `json:"findings"`
}

// severities in increasing order, as doctor names them.
var severities = []string{"info", "low", "medium", "high"}

// PlanFromDoctorJSON makes a plan of the fixes of a doctor report's fired
// findings at or above minSeverity ("info", "low", "medium", "high"). Each
// change's Rule is its finding's id; cautions and advice that cannot be
// automated become notes.
func PlanFromDoctorJSON(b []byte, minSeverity string) (*Plan, error) {
	min := slices.Index(severities, minSeverity)
	if min < 0 {
		return nil, fmt.Errorf("severity %q: want one of %s", minSeverity, strings.Join(severities, ", "))
	}
	var rep doctorReport
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("not a redline doctor --json report: %w", err)
	}
	p := &Plan{Version: PlanVersion, Sources: []string{"doctor"}}
	if rep.Target.Redis != "" {
		p.Redis = &PlanRedis{Addr: rep.Target.Redis}
	}
	for _, f := range rep.Findings {
		if f.Status != "fired" || f.Fix == nil || slices.Index(severities, f.Severity) < min {
			continue
		}
		sub := &Plan{Version: PlanVersion}
		for _, c := range f.Fix.Changes {
			if c.Rule == "" {
				c.Rule = f.ID
			}
			sub.Changes = append(sub.Changes, c)
		}
		if f.Fix.Caution != "" && len(f.Fix.Changes) > 0 {
			sub.Notes = append(sub.Notes, f.ID+": "+f.Fix.Caution)
		}
		for _, a := range f.Fix.Advice {
			sub.Notes = append(sub.Notes, f.ID+": "+a)
		}
		p.Merge(sub)
	}
	if len(p.Changes) == 0 || !p.hasKind(change.KindRedisConfig) {
		p.Redis = nil
	}
	return p, p.Validate()
}

func (p *Plan) hasKind(k change.Kind) bool {
	for _, c := range p.Changes {
		if c.Kind == k {
			return true
		}
	}
	return false
}

// ReadSourceFile reads what a plan can be made from: a plan file, a list
// of changes (JSON or YAML), or a `redline doctor --json` report (whose
// fired findings at or above minSeverity contribute their fixes).
func ReadSourceFile(path, minSeverity string) (*Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := ParseSource(b, filepath.Ext(path), minSeverity)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(p.Sources) == 0 {
		p.Sources = []string{filepath.Base(path)}
	}
	return p, nil
}

// ParseSource decodes a plan, a list of changes or a doctor report.
func ParseSource(b []byte, ext, minSeverity string) (*Plan, error) {
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		return nil, errors.New("empty file: nothing to plan from")
	}
	switch {
	case bytes.HasPrefix(trimmed, []byte("{")) && bytes.Contains(b, []byte(`"findings"`)):
		return PlanFromDoctorJSON(b, minSeverity)
	case isList(trimmed, ext):
		var changes []change.Change
		if err := decodeList(trimmed, &changes); err != nil {
			return nil, err
		}
		p := FromChanges(changes, "")
		return p, p.Validate()
	}
	return ParsePlan(b, ext)
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
