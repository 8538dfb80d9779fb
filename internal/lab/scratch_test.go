package lab

import (
	"strings"
	"testing"

	"redline/internal/change"
	"redline/internal/labdata"
)

// TestScratchFindingsMarked: the lab's doctor judged the lab's own server
// (its free port not reserved, no maxmemory) and the tuned variant
// reserved that port (issue 41). On a server the lab starts those findings
// are marked and their fixes left out, with a note; on an existing
// server (kind address, ssh with a port) they stand.
func TestScratchFindingsMarked(t *testing.T) {
	fs := []labdata.Finding{{ID: "reserved-ports"}, {ID: "maxmemory"}, {ID: "overcommit-memory"}}
	fixes := Fixes{Changes: []change.Change{
		{Kind: change.KindSysctl, Target: "net.ipv4.ip_local_reserved_ports", Value: "44593,54593", Rule: "reserved-ports"},
		{Kind: change.KindRedisConfig, Target: "maxmemory", Value: "2022077888", Rule: "maxmemory"},
		{Kind: change.KindSysctl, Target: "vm.overcommit_memory", Value: "1", Rule: "overcommit-memory"},
	}, Notes: []string{"softnet-squeeze: judged from one sample"}}
	got, kept := markScratch(fs, fixes)
	if got[0].Scratch == "" || got[1].Scratch == "" || got[2].Scratch != "" || fs[0].Scratch != "" {
		t.Errorf("marks %+v (the input %+v must stay as it was)", got, fs)
	}
	if len(kept.Changes) != 1 || kept.Changes[0].Rule != "overcommit-memory" {
		t.Errorf("safe fixes kept %+v, want overcommit-memory's only", kept.Changes)
	}
	notes := strings.Join(kept.Notes, "\n")
	if !strings.Contains(notes, "reserved-ports: left out: about the lab's own server") || !strings.Contains(notes, "maxmemory: left out") || !strings.Contains(notes, "softnet-squeeze") {
		t.Errorf("notes:\n%s", notes)
	}
	for _, c := range []struct {
		t    labdata.TargetSpec
		want bool
	}{
		{labdata.TargetSpec{Kind: "managed"}, true}, {labdata.TargetSpec{Kind: "netns"}, true},
		{labdata.TargetSpec{Kind: "managed-cluster"}, true}, {labdata.TargetSpec{Kind: "ssh", Host: "a"}, true},
		{labdata.TargetSpec{Kind: "ssh", Host: "a", Port: 6379}, false}, {labdata.TargetSpec{Kind: "address", Address: "10.0.0.5:6379"}, false},
	} {
		if got := ScratchServer(c.t); got != c.want {
			t.Errorf("%+v: scratch %v, want %v", c.t, got, c.want)
		}
	}
}
