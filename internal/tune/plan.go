package tune

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"redline/internal/change"
	"redline/internal/yamlerr"
)

// PlanVersion is the plan file format this redline reads and writes.
const PlanVersion = 1

// Plan is a list of changes a user can read, edit and apply, with what the
// planner knew when it made them.
type Plan struct {
	Version int `json:"version" yaml:"version"`
	// Host is the hostname the plan was made for; apply warns elsewhere.
	Host string `json:"host,omitempty" yaml:"host,omitempty"`
	// Sources are the profiles and findings the changes came from.
	Sources []string        `json:"sources,omitempty" yaml:"sources,omitempty"`
	Redis   *PlanRedis      `json:"redis,omitempty" yaml:"redis,omitempty"`
	Notes   []string        `json:"notes,omitempty" yaml:"notes,omitempty"`
	Changes []change.Change `json:"changes" yaml:"changes"`
}

// PlanRedis is the Redis server a plan's redis-config changes go to when
// they name no node, and for every node, the user and whether to rewrite
// redis.conf.
type PlanRedis struct {
	Network string `json:"network,omitempty" yaml:"network,omitempty"`
	Addr    string `json:"addr" yaml:"addr"`
	User    string `json:"user,omitempty" yaml:"user,omitempty"`
	// Rewrite runs CONFIG REWRITE after the changes (and again after
	// rollback), so they survive a Redis restart.
	Rewrite bool `json:"rewrite,omitempty" yaml:"rewrite,omitempty"`
}

// Validate checks the version, every change, and that no two changes write
// the same thing.
func (p *Plan) Validate() error {
	if p.Version != PlanVersion {
		return fmt.Errorf("plan version %d: this redline reads version %d plans (make a new one with redline tune plan)", p.Version, PlanVersion)
	}
	seen := map[string]int{}
	var errs []error
	for i, c := range p.Changes {
		if err := c.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("change %d: %w", i+1, err))
			continue
		}
		key := p.serverKey(c)
		if j, dup := seen[key]; dup {
			errs = append(errs, fmt.Errorf("changes %d and %d both set %s; keep one", j+1, i+1, key))
		}
		seen[key] = i
		if c.Kind == change.KindRedisConfig && c.Node == "" && (p.Redis == nil || p.Redis.Addr == "") {
			errs = append(errs, fmt.Errorf("change %d sets Redis %s but names no node and the plan has no redis.addr", i+1, c.Target))
		}
	}
	return errors.Join(errs...)
}

// serverKey is c's key with the server it goes to: a node-less Redis
// setting goes to redis.addr, so it and one naming that node as its node
// would fight.
func (p *Plan) serverKey(c change.Change) string {
	if c.Kind == change.KindRedisConfig && c.Node == "" && p.Redis != nil && p.Redis.Network != "unix" && p.Redis.Addr != "" {
		c.Node = p.Redis.Addr
	}
	return c.Key()
}

// ReadPlanFile reads a plan from a .json, .yaml or .yml file, strictly:
// unknown fields are errors, so a typo does not silently drop a setting.
func ReadPlanFile(path string) (*Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	p, err := ParsePlan(b, filepath.Ext(path))
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", path, err)
	}
	return p, nil
}

// ParsePlan decodes and validates a plan. ext (".json", ".yaml") picks the
// format; when empty, a document starting with '{' is JSON, else YAML.
func ParsePlan(b []byte, ext string) (*Plan, error) {
	var p Plan
	var err error
	if isJSON(b, ext) {
		err = decodeJSONStrict(b, &p)
	} else {
		err = decodeYAMLStrict(b, &p)
	}
	if err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

func isJSON(b []byte, ext string) bool {
	switch strings.ToLower(ext) {
	case ".json":
		return true
	case ".yaml", ".yml":
		return false
	}
	return bytes.HasPrefix(bytes.TrimSpace(b), []byte("{"))
}

func decodeJSONStrict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("invalid JSON%s: %w", jsonWhere(b, err), err)
	}
	if d.More() {
		return errors.New("invalid JSON: more than one document")
	}
	return nil
}

func decodeYAMLStrict(b []byte, v any) error {
	d := yaml.NewDecoder(bytes.NewReader(b))
	d.KnownFields(true)
	if err := d.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("empty plan")
		}
		return yamlError(b, err)
	}
	var extra yaml.Node
	if err := d.Decode(&extra); !errors.Is(err, io.EOF) {
		return errors.New("invalid YAML: more than one document")
	}
	return nil
}

// yamlSyntax is how the YAML parser words a syntax error.
var yamlSyntax = regexp.MustCompile(`^yaml: line ([0-9]+): (.*)$`)

// yamlError names the line of a YAML syntax error. The parser reports
// the line where the enclosing block starts (a key mis-indented on line 13
// of a plan is "line 2: did not find expected key"), so the line is found
// again: the first line at which the document, read up to there, stops
// parsing.
func yamlError(b []byte, err error) error {
	m := yamlSyntax.FindStringSubmatch(err.Error())
	if m == nil {
		return fmt.Errorf("invalid YAML: %w", yamlerr.Humanize(err))
	}
	said, _ := strconv.Atoi(m[1])
	lines := bytes.SplitAfter(b, []byte("\n"))
	for n := said; n <= len(lines) && n <= 10000; n++ {
		var node yaml.Node
		if yaml.Unmarshal(bytes.Join(lines[:n], nil), &node) == nil {
			continue
		}
		if n > said {
			return fmt.Errorf("invalid YAML at line %d: %s (in the block that starts at line %d)", n, m[2], said)
		}
		break
	}
	return fmt.Errorf("invalid YAML at line %d: %s", said, m[2])
}

// jsonWhere is " at line L, column C" for a JSON error that knows its
// offset, or names a key the decoder refused; "" when neither.
func jsonWhere(b []byte, err error) string {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	default:
		if key, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			if loc := regexp.MustCompile(regexp.QuoteMeta(key) + `\s*:`).FindIndex(b); loc != nil {
				off = int64(loc[0]) + 1
			}
		}
	}
	if off < 0 || off > int64(len(b)) {
		return ""
	}
	before := b[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	return fmt.Sprintf(" at line %d, column %d (offset %d)", line, col, off)
}

// Plans are written indented, with a trailing newline, so they diff well
// under version control.

// EncodeJSON writes p as indented JSON.
func (p *Plan) EncodeJSON(w io.Writer) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(p)
}

// EncodeYAML writes p as YAML. comments, keyed by change index, are put
// after each change's value (the planner uses them for "now: 0-1").
func (p *Plan) EncodeYAML(w io.Writer, header string, comments map[int]string) error {
	var doc yaml.Node
	if err := doc.Encode(p); err != nil {
		return err
	}
	doc.HeadComment = header
	annotate(&doc, comments)
	e := yaml.NewEncoder(w)
	e.SetIndent(2)
	if err := e.Encode(&doc); err != nil {
		return err
	}
	return e.Close()
}

// annotate puts comments[i] on the value line of change i.
func annotate(doc *yaml.Node, comments map[int]string) {
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value != "changes" {
			continue
		}
		for ci, item := range doc.Content[i+1].Content {
			for k := 0; k+1 < len(item.Content); k += 2 {
				if item.Content[k].Value == "value" && comments[ci] != "" {
					item.Content[k+1].LineComment = comments[ci]
				}
			}
		}
	}
}

// FromChanges makes a plan of changes (doctor findings' fixes, or a list
// written by hand); source names where they came from.
func FromChanges(changes []change.Change, source string) *Plan {
	p := &Plan{Version: PlanVersion, Changes: append([]change.Change(nil), changes...)}
	if source != "" {
		p.Sources = []string{source}
	}
	return p
}

// Merge appends q's changes to p. A change to a target p already sets is
// dropped with a note, so the first source wins and the plan stays valid.
func (p *Plan) Merge(q *Plan) {
	have := map[string]bool{}
	for _, c := range p.Changes {
		have[c.Key()] = true
	}
	for _, c := range q.Changes {
		if have[c.Key()] {
			p.Notes = append(p.Notes, fmt.Sprintf("%s from %s dropped: an earlier source already sets it", c.Key(), c.Rule))
			continue
		}
		have[c.Key()] = true
		p.Changes = append(p.Changes, c)
	}
	p.Sources = append(p.Sources, q.Sources...)
	p.Notes = append(p.Notes, q.Notes...)
	if p.Redis == nil {
		p.Redis = q.Redis
	}
}

// ForNodes sends the plan's Redis settings to every node of a cluster: a
// redis-config change that names no node becomes one change per node, in
// place; a node that already has its own change of that parameter (a
// doctor fix for that node) keeps it, with a note. Nothing changes when
// nodes is empty (a single server).
func (p *Plan) ForNodes(nodes []string) {
	if len(nodes) == 0 {
		return
	}
	have := map[string]bool{}
	for _, c := range p.Changes {
		have[c.Key()] = true
	}
	var out []change.Change
	for _, c := range p.Changes {
		if c.Kind != change.KindRedisConfig || c.Node != "" {
			out = append(out, c)
			continue
		}
		for _, n := range nodes {
			nc := c
			nc.Node = n
			if have[nc.Key()] {
				p.Notes = append(p.Notes, fmt.Sprintf("%s from %s dropped on node %s: a change for that node already sets it", c.Key(), c.Rule, n))
				continue
			}
			have[nc.Key()] = true
			out = append(out, nc)
		}
	}
	p.Changes = out
}
