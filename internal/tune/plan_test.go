package tune

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"redline/internal/change"
)

const yamlPlan = `version: 1
host: db1
sources: [profile:net-sysctl]
redis:
  addr: 127.0.0.1:6379
  rewrite: true
changes:
  - kind: sysctl
    target: net.core.somaxconn
    value: "8192"
    why: listen() caps the backlog at somaxconn
    rule: net-sysctl
  - kind: file
    target: /proc/irq/24/smp_affinity_list
    value: "1"
  - kind: redis-config
    target: hz
    value: "20"
`

func TestParsePlanYAMLAndJSON(t *testing.T) {
	p, err := ParsePlan([]byte(yamlPlan), ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 3 || p.Redis.Addr != "127.0.0.1:6379" || !p.Redis.Rewrite || p.Changes[0].Rule != "net-sysctl" {
		t.Fatalf("parsed: %+v", p)
	}
	var js bytes.Buffer
	if err := p.EncodeJSON(&js); err != nil {
		t.Fatal(err)
	}
	back, err := ParsePlan(js.Bytes(), "")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(p, back); d != "" {
		t.Fatalf("JSON round trip (-yaml +json):\n%s", d)
	}
	var ys bytes.Buffer
	if err := p.EncodeYAML(&ys, "made by a test", map[int]string{1: "now: 0-7"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ys.String(), "# made by a test") || !strings.Contains(ys.String(), `value: "1" # now: 0-7`) {
		t.Fatalf("YAML output lacks its comments:\n%s", ys.String())
	}
	again, err := ParsePlan(ys.Bytes(), ".yml")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(p, again); d != "" {
		t.Fatalf("YAML round trip:\n%s", d)
	}
}

func TestParsePlanErrors(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"unknown field", strings.Replace(yamlPlan, "value: \"8192\"", "valu: \"8192\"", 1), "valu"},
		{"version", strings.Replace(yamlPlan, "version: 1", "version: 2", 1), "version 2"},
		{"kind", strings.Replace(yamlPlan, "kind: sysctl", "kind: sysctrl", 1), "unknown change kind"},
		{"outside proc", strings.Replace(yamlPlan, "/proc/irq/24/smp_affinity_list", "/etc/passwd", 1), "outside /proc and /sys"},
		{"dot dot", strings.Replace(yamlPlan, "/proc/irq/24/smp_affinity_list", "/proc/../etc/passwd", 1), "clean absolute path"},
		{"bad cpulist", strings.Replace(yamlPlan, `value: "1"`, `value: "x"`, 1), "not a CPU number"},
		{"duplicate", yamlPlan + "  - kind: sysctl\n    target: net.core.somaxconn\n    value: \"1\"\n", "both set sysctl net.core.somaxconn"},
		{"no redis addr", strings.Replace(yamlPlan, "  addr: 127.0.0.1:6379\n", "", 1), "no redis.addr"},
		{"same node twice", yamlPlan + "  - {kind: redis-config, target: hz, value: \"30\", node: \"127.0.0.1:6379\"}\n", "both set redis-config hz on 127.0.0.1:6379"},
		{"node on a sysctl", strings.Replace(yamlPlan, "    rule: net-sysctl\n", "    rule: net-sysctl\n    node: 127.0.0.1:7001\n", 1), "only redis-config changes go to a node"},
		{"two docs", yamlPlan + "---\nversion: 1\n", "more than one document"},
		{"empty", "", "empty plan"},
		{"json unknown", `{"version":1,"changes":[],"extra":1}`, "unknown field"},
	}
	for _, c := range cases {
		_, err := ParsePlan([]byte(c.doc), "")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

// A plan of one server's Redis settings (written before nodes existed)
// reads as it did; one naming nodes needs no redis.addr.
func TestPlanNodes(t *testing.T) {
	p, err := ParsePlan([]byte(yamlPlan), ".yaml")
	if err != nil || p.Changes[2].Node != "" || p.Redis.Addr != "127.0.0.1:6379" {
		t.Fatalf("single-server plan: %+v %v", p, err)
	}
	doc := "version: 1\nchanges:\n  - {kind: redis-config, target: hz, value: \"20\", node: \"127.0.0.1:7001\"}\n  - {kind: redis-config, target: hz, value: \"20\", node: \"127.0.0.1:7002\"}\n"
	if p, err = ParsePlan([]byte(doc), ""); err != nil || len(p.Changes) != 2 {
		t.Fatalf("node plan: %+v %v", p, err)
	}
	q := FromChanges([]change.Change{
		{Kind: change.KindSysctl, Target: "net.core.somaxconn", Value: "4096"},
		{Kind: change.KindRedisConfig, Target: "hz", Value: "20"},
		{Kind: change.KindRedisConfig, Target: "maxmemory-policy", Value: "allkeys-lru"},
		{Kind: change.KindRedisConfig, Target: "hz", Value: "50", Node: "b:2"},
	}, "test")
	q.ForNodes([]string{"a:1", "b:2"})
	var got []string
	for _, c := range q.Changes {
		got = append(got, c.String())
	}
	want := []string{"sysctl net.core.somaxconn = 4096", "redis-config hz = 20 on a:1",
		"redis-config maxmemory-policy = allkeys-lru on a:1", "redis-config maxmemory-policy = allkeys-lru on b:2", "redis-config hz = 50 on b:2"}
	if diff := cmp.Diff(want, got); diff != "" || len(q.Notes) != 1 || !strings.Contains(q.Notes[0], "dropped on node b:2") {
		t.Errorf("ForNodes (-want +got):\n%s\nnotes %q", diff, q.Notes)
	}
}

func TestMergeKeepsFirst(t *testing.T) {
	a := FromChanges([]change.Change{{Kind: change.KindSysctl, Target: "net.core.somaxconn", Value: "1", Rule: "a"}}, "a")
	b := FromChanges([]change.Change{{Kind: change.KindSysctl, Target: "net.core.somaxconn", Value: "2", Rule: "b"},
		{Kind: change.KindSysctl, Target: "vm.overcommit_memory", Value: "1", Rule: "b"}}, "b")
	a.Merge(b)
	if len(a.Changes) != 2 || a.Changes[0].Value != "1" || len(a.Notes) != 1 || len(a.Sources) != 2 {
		t.Fatalf("merged: %+v", a)
	}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
}

func FuzzParsePlan(f *testing.F) {
	f.Add([]byte(yamlPlan))
	f.Add([]byte(`{"version":1,"changes":[{"kind":"file","target":"/sys/x/rps_cpus","value":"f"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseSource(b, "")
		if err != nil {
			return
		}
		// Whatever parses must survive its own encoding.
		var buf bytes.Buffer
		if err := p.EncodeYAML(&buf, "", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := ParsePlan(buf.Bytes(), ".yaml"); err != nil {
			t.Fatalf("re-parse of an encoded plan: %v\n%s", err, buf.String())
		}
	})
}

func FuzzJournal(f *testing.F) {
	f.Add([]byte(`{"op":"begin","session":"s","time":"2025-01-01T00:00:00Z","begin":{"root":"/"}}
{"op":"intent","session":"s","seq":1,"time":"2025-01-01T00:00:00Z","change":{"kind":"sysctl","target":"a.b","value":"1"},"old":"0"}
{"op":"done","session":"s","seq":1,"time":"2025-01-01T00:00:00Z","applied":"1"}
`))
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := parseRecords(bytes.NewReader(b), "fuzz")
		if err != nil {
			return
		}
		sessions, err := ledger(recs)
		if err != nil {
			return
		}
		for _, s := range sessions {
			for _, e := range s.Pending() {
				_ = e.ours()
			}
		}
	})
}

// Issue 10 item 7: plan-file errors name the line where the problem is:
// for YAML the line of a mis-indented key, not the start of its block; for
// JSON the line and column of the offset, or of a refused key.
func TestPlanErrorLines(t *testing.T) {
	cases := []struct{ ext, doc, want string }{
		{".yaml", "version: 1\nchanges:\n  - kind: sysctl\n    target: net.core.somaxconn\n    value: \"1024\"\n" +
			"  - kind: sysctl\n    target: vm.swappiness\n    value: \"1\"\n  - kind: sysctl\n    target: vm.overcommit_memory\n" +
			"    value: \"1\"\n  - kind: sysctl\n    target: net.core.netdev_max_backlog\n   value: \"1\"\n", "line 14"},
		{".yaml", "version: 1\nchanges:\n  - kind: sysctl\n    target: x\n    valeu: 1\n", "line 5"},
		{".json", "{\"version\": 1,\n \"changes\": [\n  {\"kind\": \"sysctl\", \"target\": \"x\",\n   \"valu\": \"1\"}]}", "line 4, column 4"},
		{".json", "{\"version\": 1,\n \"changes\": [\n  {\"kind\": \"sysctl\", \"target\": \"x\",\n   \"value\": 1}]}", "line 4, column"},
		{".json", "{\"version\": 1,\n \"changes\": [\n  {\"kind\": \"sysctl\", \"target\": \"x\"}}", "line 3, column"},
	}
	for _, c := range cases {
		_, err := ParsePlan([]byte(c.doc), c.ext)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s plan:\n%s\nerror %v; want it to name %s", c.ext, c.doc, err, c.want)
		}
	}
}

// A plan with a numeric sysctl set to a word fails when it is read, before
// anything is written (issue 41).
func TestParsePlanRefusesAWordForANumber(t *testing.T) {
	_, err := ParsePlan([]byte("version: 1\nchanges:\n  - kind: sysctl\n    target: net.core.somaxconn\n    value: lots\n"), ".yaml")
	if err == nil || !strings.Contains(err.Error(), `"lots": want a number`) {
		t.Errorf("error %v, want the value refused by kind", err)
	}
}
