package rules

import (
	"fmt"

	"redline/internal/change"
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "rfs", Section: "network", Severity: doctor.Low,
		Title:  "RPS is on but RFS tables are empty",
		Why:    "RFS steers each flow to the CPU of the thread reading it; it needs both rps_sock_flow_entries and each queue's rps_flow_cnt (32768 entries \"works fairly well\")",
		Source: "K-scal (RFS)",
		Reads:  []string{"nics", "sysctls"},
		Needs:  doctor.NeedHost,
		Proves: []string{"/proc/sys/net/core/rps_sock_flow_entries"},
		Check:  checkRFS,
	})
}

const rfsEntries = 32768

func checkRFS(f *doctor.Facts) doctor.Result {
	entries, eev, ok := f.SysctlInt("net.core.rps_sock_flow_entries")
	if !ok {
		return doctor.Skip("this kernel has no RFS (CONFIG_RPS off)")
	}
	for _, n := range f.TargetNICs() {
		rx := usableRx(n)
		if rpsSet(n) == "" {
			continue
		}
		fix := new(doctor.Fix)
		if entries == 0 {
			fix.Sysctl("net.core.rps_sock_flow_entries", fmt.Sprint(rfsEntries), eev.Value, "global RFS table")
		}
		per := rfsEntries / len(rx)
		for _, q := range rx {
			if q.RPSFlowCnt != nil && *q.RPSFlowCnt == 0 {
				fix.Set(change.KindFile, fmt.Sprintf("/sys/class/net/%s/queues/rx-%d/rps_flow_cnt", n.Name, q.Index), fmt.Sprint(per), "0", "per-queue RFS table: entries / queues")
			}
		}
		if len(fix.Changes) > 0 {
			return doctor.Fire("RPS is on for %s but RFS is not configured", n.Name).With(eev).WithFix(fix)
		}
	}
	return doctor.Pass("no NIC with RPS lacks RFS tables").With(eev)
}
