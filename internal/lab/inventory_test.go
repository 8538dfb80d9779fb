package lab

import (
	"strings"
	"testing"

	"redline/internal/target/policy"
	"redline/internal/testutil"
)

func TestInventoryDifferences(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{
		"proc/sys/vm/overcommit_memory":              "0\n",
		"proc/sys/net/ipv4/ip_local_port_range":      "32768\t60999\n",
		"proc/irq/24/smp_affinity_list":              "0-3\n",
		"sys/kernel/mm/transparent_hugepage/enabled": "always [madvise] never\n",
		"proc/10/comm": "redis-server\n",
		"proc/11/comm": "bash\n",
	})
	start := takeInventory(root)
	if len(start) != 4 || start["/proc/sys/net/ipv4/ip_local_port_range"] != "32768 60999" {
		t.Fatalf("inventory %v", start)
	}
	if d := start.differences(takeInventory(root)); len(d) != 0 || !strings.HasPrefix(restoredLine(d), "host restored") {
		t.Fatalf("unchanged host: %v", d)
	}
	end := takeInventory(root)
	end["/proc/sys/vm/overcommit_memory"] = "1"
	d := start.differences(end)
	if len(d) != 1 || d[0] != "/proc/sys/vm/overcommit_memory: 0 -> 1" || !strings.Contains(restoredLine(d), "NOT as found") {
		t.Fatalf("changed host: %v, %s", d, restoredLine(d))
	}
	if got := policy.OtherServers(root); len(got) != 1 || got[0] != "pid 10" {
		t.Fatalf("other servers %v", got)
	}
}
