package rules

import (
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "fork-rate", Section: "memory", Severity: doctor.Medium,
		Title:  "Forking the server is slow",
		Why:    "the main thread stops while fork() copies page tables; LATENCY DOCTOR grades the rate: under 10 GB/s terrible, under 25 GB/s poor",
		Source: "RS latency.c (fork rate grades); RD-lat (9-13 ms per GB on physical hosts, 239 ms on old Xen)",
		Needs:  doctor.NeedRedis,
		Proves: []string{"INFO latest_fork_usec"},
		Check:  checkForkRate,
	})
}

func checkForkRate(f *doctor.Facts) doctor.Result {
	usec, fev, ok := f.InfoInt("latest_fork_usec")
	if !ok || usec <= 0 {
		return doctor.Skip("the server has not forked since it started")
	}
	mem, mev, _ := f.InfoInt("used_memory")
	rate := float64(mem) / (1 << 30) / (float64(usec) / 1e6)
	r := doctor.Ev("fork rate", rateText(rate))
	evs := []doctor.Evidence{fev, mev, r}
	if mem < 1<<30/10 {
		return doctor.Pass("fork took %d us for %s; too little memory to grade the rate", usec, doctor.Bytes(uint64(mem))).With(evs...)
	}
	fix := &doctor.Fix{Advice: []string{
		"disable THP (thp-enabled) and NUMA balancing (numa-balancing)",
		"on a VM, use an instance type with hardware-assisted page tables (not Xen PV); split very large instances",
	}}
	switch {
	case rate < 10:
		return doctor.Fire("fork rate %s: \"terrible\" by LATENCY DOCTOR's grades", rateText(rate)).With(evs...).WithFix(fix).WithSeverity(doctor.High)
	case rate < 25:
		return doctor.Fire("fork rate %s: \"poor\" by LATENCY DOCTOR's grades", rateText(rate)).With(evs...).WithFix(fix)
	}
	return doctor.Pass("fork rate %s", rateText(rate)).With(evs...)
}

func rateText(gbps float64) string {
	return formatFloat(gbps) + " GB/s"
}
