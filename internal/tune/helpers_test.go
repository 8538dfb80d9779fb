package tune

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"redline/internal/testutil"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"redline/internal/change"
	"redline/internal/tune/simfs"
)

// smallHost is a fixture tree modelled on an 8-CPU machine with a 4-queue
// NIC: the files tune writes, with the kernel's own formatting (a tab in
// ip_local_port_range, brackets in THP files, 8-bit masks).
var smallHost = map[string]string{
	"proc/sys/kernel/random/boot_id":              "5e1c0a5e-0000-4000-8000-000000000001\n",
	"proc/sys/net/core/somaxconn":                 "4096\n",
	"proc/sys/net/core/netdev_max_backlog":        "1000\n",
	"proc/sys/net/core/rps_sock_flow_entries":     "0\n",
	"proc/sys/net/ipv4/ip_local_port_range":       "32768\t60999\n",
	"proc/sys/net/ipv4/tcp_max_syn_backlog":       "512\n",
	"proc/sys/net/ipv4/tcp_rmem":                  "4096\t131072\t6291456\n",
	"proc/sys/vm/overcommit_memory":               "0\n",
	"proc/sys/vm/dirty_bytes":                     "0\n",
	"proc/sys/vm/dirty_ratio":                     "20\n",
	"proc/irq/24/smp_affinity_list":               "0-7\n",
	"proc/irq/25/smp_affinity_list":               "0-7\n",
	"proc/irq/26/smp_affinity_list":               "0-7\n",
	"proc/irq/27/smp_affinity_list":               "0-7\n",
	"proc/irq/27/smp_affinity":                    "ff\n",
	"sys/kernel/mm/transparent_hugepage/enabled":  "[always] madvise never\n",
	"sys/kernel/mm/transparent_hugepage/defrag":   "always defer defer+madvise [madvise] never\n",
	"sys/class/net/eth0/queues/rx-0/rps_cpus":     "00\n",
	"sys/class/net/eth0/queues/rx-1/rps_cpus":     "00\n",
	"sys/class/net/eth0/queues/rx-0/rps_flow_cnt": "0\n",
	"sys/class/net/eth0/queues/tx-0/xps_cpus":     "00\n",
	"sys/class/net/eth0/queues/tx-1/xps_cpus":     "00\n",
}

// snapshot is every regular file below root with its content and mode.
func snapshot(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.Type()&fs.ModeSymlink != 0 {
			link, err := os.Readlink(p)
			out[rel] = "symlink " + link
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[rel] = info.Mode().String() + " " + string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func requireSame(t testing.TB, want, got map[string]string, what string) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("%s: tree differs from the original (-want +got):\n%s", what, d)
	}
}

// smallPlan touches every file form in smallHost: plain and multi-value
// sysctls, a coupled sysctl pair, CPU lists, masks, and a THP choice.
func smallPlan() *Plan {
	return &Plan{Version: PlanVersion, Changes: []change.Change{
		{Kind: change.KindSysctl, Target: "net.core.somaxconn", Value: "8192", Rule: "test"},
		{Kind: change.KindSysctl, Target: "net.ipv4.ip_local_port_range", Value: "1025 65000", Rule: "test"},
		{Kind: change.KindSysctl, Target: "vm.dirty_bytes", Value: "268435456", Rule: "test"},
		{Kind: change.KindFile, Target: "/proc/irq/24/smp_affinity_list", Value: "1"},
		{Kind: change.KindFile, Target: "/proc/irq/25/smp_affinity_list", Value: "2,3"},
		{Kind: change.KindFile, Target: "/proc/irq/26/smp_affinity_list", Value: "3"},
		{Kind: change.KindFile, Target: "/proc/irq/27/smp_affinity", Value: "10"},
		{Kind: change.KindFile, Target: "/sys/class/net/eth0/queues/rx-0/rps_cpus", Value: "f"},
		{Kind: change.KindFile, Target: "/sys/class/net/eth0/queues/rx-0/rps_flow_cnt", Value: "4096"},
		{Kind: change.KindFile, Target: "/sys/class/net/eth0/queues/tx-1/xps_cpus", Value: "0c"},
		{Kind: change.KindFile, Target: "/sys/kernel/mm/transparent_hugepage/enabled", Value: "madvise"},
		{Kind: change.KindSysctl, Target: "net.core.rps_sock_flow_entries", Value: "32768"},
	}}
}

// rehearsal is a simulated tree with the small host's files.
func rehearsal(t testing.TB) (*System, string, map[string]string) {
	t.Helper()
	root := testutil.WriteTree(t, smallHost)
	return RehearsalSystem(root), root, snapshot(t, root)
}

func simOf(s *System) *simfs.FS { return s.FS.(*simfs.FS) }

func readRel(t testing.TB, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(string(b), "\n")
}

func byStatus(outs []Outcome) map[Status]int {
	m := map[Status]int{}
	for _, o := range outs {
		m[o.Status]++
	}
	return m
}

var bg = context.Background()
