package redisadmin

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"redline/internal/resp"
)

func arr(v ...resp.Value) resp.Value { return resp.Value{Type: '*', Elems: v} }

func TestParseClusterShards(t *testing.T) {
	node := func(id, ip, port, role, health string) resp.Value {
		return arr(bulk("id"), bulk(id), bulk("port"), bulk(port), bulk("ip"), bulk(ip), bulk("role"), bulk(role), bulk("health"), bulk(health))
	}
	v := arr(
		// The replica listed first: the primary still comes first.
		arr(bulk("slots"), arr(bulk("0"), bulk("99"), bulk("200"), bulk("200")), bulk("nodes"), arr(
			node("r1", "10.0.0.2", "7001", "replica", "loading"), node("p1", "10.0.0.1", "7000", "master", "online"))),
		arr(bulk("slots"), arr(), bulk("nodes"), arr(node("p2", "10.0.0.3", "7002", "master", "fail"))),
	)
	want := []ClusterShard{
		{Slots: []SlotRange{{0, 99}, {200, 200}}, Nodes: []ClusterMember{
			{ID: "p1", Addr: "10.0.0.1:7000", Role: "master", Health: "online"}, {ID: "r1", Addr: "10.0.0.2:7001", Role: "replica", Health: "loading"}}},
		{Nodes: []ClusterMember{{ID: "p2", Addr: "10.0.0.3:7002", Role: "master", Health: "fail"}}},
	}
	got := ParseClusterShards(v)
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
	if got[0].SlotCount() != 101 || got[0].Slots[1].String() != "200" || got[0].Slots[0].String() != "0-99" {
		t.Errorf("slot count %d, ranges %v", got[0].SlotCount(), got[0].Slots)
	}
}

func TestParseClusterSlots(t *testing.T) {
	n := func(ip, port, id string) resp.Value { return arr(bulk(ip), bulk(port), bulk(id)) }
	v := arr(
		arr(bulk("0"), bulk("5460"), n("10.0.0.1", "7000", "p1"), n("10.0.0.2", "7003", "r1")),
		arr(bulk("5461"), bulk("16383"), n("10.0.0.3", "7001", "p2")),
		arr(bulk("16000"), bulk("16000"), n("10.0.0.1", "7000", "p1"), n("10.0.0.2", "7003", "r1")),
	)
	want := []ClusterShard{
		{Slots: []SlotRange{{0, 5460}, {16000, 16000}}, Nodes: []ClusterMember{{ID: "p1", Addr: "10.0.0.1:7000", Role: "master"}, {ID: "r1", Addr: "10.0.0.2:7003", Role: "replica"}}},
		{Slots: []SlotRange{{5461, 16383}}, Nodes: []ClusterMember{{ID: "p2", Addr: "10.0.0.3:7001", Role: "master"}}},
	}
	if d := cmp.Diff(want, ParseClusterSlots(v)); d != "" {
		t.Error(d)
	}
}

func TestParseClusterNodeFlags(t *testing.T) {
	text := "e7d1 127.0.0.1:30001@31001 myself,master - 0 0 1 connected 0-5460\n" +
		"07c3 127.0.0.1:30004@31004 slave,fail? e7d1 0 1426238317239 4 connected\n\n"
	want := map[string][]string{"e7d1": {"myself", "master"}, "07c3": {"slave", "fail?"}}
	if d := cmp.Diff(want, parseClusterNodeFlags(text)); d != "" {
		t.Error(d)
	}
}

// A node is working, failed, or (loading) neither; the docs' "failed"
// spelling counts as the server's "fail".
func TestClusterMemberHealth(t *testing.T) {
	for _, tc := range []struct {
		health          string
		working, failed bool
	}{
		{"online", true, false}, {"", true, false}, {"loading", false, false}, {"fail", false, true}, {"failed", false, true},
	} {
		m := ClusterMember{Health: tc.health}
		if m.Working() != tc.working || m.Failed() != tc.failed {
			t.Errorf("%q: working %v failed %v, want %v %v", tc.health, m.Working(), m.Failed(), tc.working, tc.failed)
		}
	}
}
