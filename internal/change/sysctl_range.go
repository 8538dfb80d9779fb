package change

import (
	"fmt"
	"strconv"
	"strings"
)

// Numeric sysctls are checked by kind when a plan is read: a value the
// kernel would refuse (EINVAL: "lots", or out of its range) fails the
// plan before anything is written, rather than at the write with a
// restore after it. The ranges are the kernel's (proc_dointvec_minmax
// bounds in net/core/sysctl_net_core.c, net/ipv4/sysctl_net_ipv4.c,
// kernel/sysctl.c, mm/); an int sysctl without bounds takes 0..INT_MAX here
// (a negative backlog or budget is never meant). Sysctls not listed (a
// congestion control's name, a list of ports) are not checked by kind.

// sysctlRange is a numeric sysctl: its fields and their bounds.
type sysctlRange struct {
	fields   int
	min, max int64
}

const intMax = 1<<31 - 1

var sysctlRanges = map[string]sysctlRange{
	"net.core.somaxconn":                 {1, 0, intMax},
	"net.core.netdev_max_backlog":        {1, 0, intMax},
	"net.core.netdev_budget":             {1, 0, intMax},
	"net.core.netdev_budget_usecs":       {1, 0, intMax},
	"net.core.rps_sock_flow_entries":     {1, 0, intMax},
	"net.core.busy_read":                 {1, 0, intMax},
	"net.core.busy_poll":                 {1, 0, intMax},
	"net.core.rmem_max":                  {1, 0, intMax},
	"net.core.wmem_max":                  {1, 0, intMax},
	"net.ipv4.tcp_max_syn_backlog":       {1, 0, intMax},
	"net.ipv4.tcp_max_tw_buckets":        {1, 0, intMax},
	"net.ipv4.tcp_fin_timeout":           {1, 0, intMax},
	"net.ipv4.tcp_tw_reuse":              {1, 0, 2},
	"net.ipv4.tcp_syncookies":            {1, 0, 2},
	"net.ipv4.tcp_slow_start_after_idle": {1, 0, 1},
	"net.ipv4.tcp_keepalive_time":        {1, 1, intMax},
	"net.ipv4.ip_local_port_range":       {2, 1, 65535},
	"net.ipv4.tcp_rmem":                  {3, 1, intMax},
	"net.ipv4.tcp_wmem":                  {3, 1, intMax},
	"vm.overcommit_memory":               {1, 0, 2},
	"vm.swappiness":                      {1, 0, 200},
	"vm.zone_reclaim_mode":               {1, 0, intMax},
	"kernel.numa_balancing":              {1, 0, 3},
	"fs.file-max":                        {1, 0, 1<<63 - 1},
	"fs.nr_open":                         {1, 0, intMax},
}

// validateSysctlValue checks a listed numeric sysctl's value: its number
// of fields, each a number within the kernel's range.
func validateSysctlValue(name, value string) error {
	r, ok := sysctlRanges[strings.ReplaceAll(strings.Trim(name, "/"), "/", ".")]
	if !ok {
		return nil
	}
	f := strings.Fields(value)
	want := "a number"
	if r.fields > 1 {
		want = fmt.Sprintf("%d numbers", r.fields)
	}
	if len(f) != r.fields {
		return fmt.Errorf("value %q: want %s, each %d to %d", value, want, r.min, r.max)
	}
	for _, s := range f {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < r.min || n > r.max {
			return fmt.Errorf("value %q: want %s, each %d to %d (the kernel's range)", value, want, r.min, r.max)
		}
	}
	return nil
}
