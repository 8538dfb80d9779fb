package bench

import (
	"context"
	"testing"

	"redline/internal/redistest"
	"redline/internal/resp"
)

func TestClusterTopology(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	o := DefaultOptions()
	top, err := fetchTopology(context.Background(), &o, c.Seed())
	if err != nil {
		t.Fatal(err)
	}
	if len(top.nodes) != 3 || top.uncovered() != 0 {
		t.Fatalf("topology: %d primaries, %d slots uncovered; want 3 and 0", len(top.nodes), top.uncovered())
	}
	for i, n := range top.nodes {
		if n.Addr != c.Primaries[i].Addr() || len(n.Replicas) != 1 || n.Slots < 5461 || n.ID == "" {
			t.Errorf("node %d = %+v, want %s with 1 replica and a third of the slots", i, n, c.Primaries[i].Addr())
		}
	}
	// The CLUSTER SLOTS reading of the same cluster gives the same map.
	cl := redistest.Client(t, c.Primaries[1])
	old, err := parseClusterSlots(redistest.Do(t, cl, "CLUSTER", "SLOTS"))
	if err != nil {
		t.Fatal(err)
	}
	if old.slots != top.slots || len(old.nodes) != 3 || len(old.nodes[2].Replicas) != 1 {
		t.Errorf("CLUSTER SLOTS gives another map: %+v", old.nodes)
	}
	keys, ok := parseCommandKeys(redistest.Do(t, cl, "COMMAND", "INFO", "mset"))
	if !ok || keys.first != 1 || keys.last != -1 || keys.step != 2 || !keys.multi() {
		t.Errorf("COMMAND INFO mset = %+v", keys)
	}
	if _, ok := parseCommandKeys(resp.Value{Type: '*', Elems: []resp.Value{{Null: true}}}); ok {
		t.Error("an unknown command has key positions")
	}
}
