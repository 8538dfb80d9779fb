package lab

import (
	"strings"
	"testing"

	"redline/internal/labdata"
)

// TestExpandRefusesSameNamedItems: runs pair by item name, so two items
// of one name (a workload named like another's test)
// are refused before anything runs, naming both.
func TestExpandRefusesSameNamedItems(t *testing.T) {
	tg := &target{addr: "127.0.0.1:6379"}
	for _, ws := range [][]labdata.WorkloadSpec{
		{{Name: "a", Bench: "redis-benchmark -t get,set -n 10"}, {Name: "a/GET", Bench: "redis-benchmark -t get -n 10"}},
	} {
		_, err := expand(labdata.Scenario{Workloads: ws}, tg, nil)
		if err == nil || !strings.Contains(err.Error(), `a second item named "a/GET"`) {
			t.Errorf("workloads %+v: %v, want a refusal naming a/GET", ws, err)
		}
	}
	if _, err := expand(labdata.Scenario{Workloads: []labdata.WorkloadSpec{{Name: "a", Bench: "redis-benchmark -t get,set -n 10"}}}, tg, nil); err != nil {
		t.Errorf("distinct names: %v", err)
	}
}
