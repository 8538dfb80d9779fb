package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"redline/internal/target/policy"
	"slices"
	"strings"
)

// inventory is the host-wide values a lab's variants can change, by path
// under the root: the writable sysctls of vm, kernel's NUMA and scheduler
// knobs, net.core and net.ipv4 of the lab's own network namespace, THP,
// every IRQ's affinity and every CPU's frequency governor. The lab takes
// one before it starts anything and one after it has cleaned up, and says
// whether the host is as it found it.
type inventory map[string]string

// inventoryGlobs are the files an inventory reads, relative to the root.
var inventoryGlobs = []string{
	"proc/sys/vm/*",
	"proc/sys/kernel/numa_balancing",
	"proc/sys/kernel/sched_*",
	"proc/sys/net/core/*",
	"proc/sys/net/ipv4/*",
	"sys/kernel/mm/transparent_hugepage/enabled",
	"sys/kernel/mm/transparent_hugepage/defrag",
	"proc/irq/*/smp_affinity_list",
	"sys/devices/system/cpu/cpu*/cpufreq/scaling_governor",
}

// takeInventory reads the inventory under root ("/" for this host). A file
// that cannot be read, or that nobody can write, is left out.
func takeInventory(root string) inventory {
	inv := inventory{}
	for _, g := range inventoryGlobs {
		paths, _ := filepath.Glob(filepath.Join(root, g))
		for _, p := range paths {
			st, err := os.Stat(p)
			if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o222 == 0 || st.Mode().Perm()&0o444 == 0 {
				continue
			}
			b, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			rel, _ := filepath.Rel(root, p)
			inv["/"+rel] = strings.Join(strings.Fields(string(b)), " ")
		}
	}
	return inv
}

// differences lists what differs from the start, one "path: before ->
// after" each, sorted.
func (start inventory) differences(end inventory) []string {
	var out []string
	for k, v := range start {
		if w, ok := end[k]; ok && w != v {
			out = append(out, fmt.Sprintf("%s: %s -> %s", k, v, w))
		}
	}
	slices.Sort(out)
	return out
}

// restoredLine is the lab's last word on the host: "host restored", or
// what differs from the start (changed during the lab and not put back by
// its rollback: by another process, or a rollback that failed).
func restoredLine(diff []string) string {
	if len(diff) == 0 {
		return "host restored: every host-wide value read at the start (sysctls, THP, IRQ affinities, CPU governors) is as it was"
	}
	return fmt.Sprintf("host NOT as found: %d host-wide value(s) differ from the start (not restored by this lab's rollback: changed by another process, or a rollback failed): %s",
		len(diff), strings.Join(diff, "; "))
}

// takeStock is the inventory of this host before the lab starts anything,
// and the other redis-servers it runs, said in one line: the lab's
// host-wide changes (those outside the server's network namespace) reach
// them too.
func (l *labRun) takeStock() inventory {
	l.res.OtherServers = policy.OtherServers("/")
	if n := len(l.res.OtherServers); n > 0 {
		l.event(Event{Message: fmt.Sprintf("this host runs %d other redis-server(s) (%s): host-wide changes (vm.* sysctls, THP, IRQ affinities, CPU governors, and net.* sysctls outside a network namespace) reach them too",
			n, strings.Join(l.res.OtherServers, ", "))})
	}
	return takeInventory("/")
}

// checkStock compares the host with the inventory taken at the start (the
// command prints Result.HostCheck last).
func (l *labRun) checkStock(start inventory) {
	l.res.HostCheck = restoredLine(start.differences(takeInventory("/")))
}
