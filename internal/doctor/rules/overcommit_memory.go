package rules

import (
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "overcommit-memory", Section: "memory", Severity: doctor.High,
		Title:  "vm.overcommit_memory is not 1",
		Why:    "BGSAVE and replication fork the server; without overcommit the fork can fail under memory pressure (redis-server warns at start-up)",
		Source: "RS server.c linuxMemoryWarnings; RD-adm",
		Reads:  []string{"sysctls"},
		Needs:  doctor.NeedHost,
		Proves: []string{"/proc/sys/vm/overcommit_memory"},
		Check:  checkOvercommit,
	})
}

func checkOvercommit(f *doctor.Facts) doctor.Result {
	v, ev, ok := f.SysctlInt("vm.overcommit_memory")
	if !ok {
		return doctor.Skip("vm.overcommit_memory is not readable on this kernel")
	}
	if v == 1 {
		return doctor.Pass("vm.overcommit_memory = 1").With(ev)
	}
	return doctor.Fire("vm.overcommit_memory is %d: a fork for BGSAVE, BGREWRITEAOF or a full resync can fail with \"Cannot allocate memory\"", v).
		With(ev).
		WithFix(new(doctor.Fix).Sysctl("vm.overcommit_memory", "1", ev.Value, "let the server fork without reserving a full copy")).
		Note("vm.* sysctls are not namespaced: this changes the whole host")
}
