package rules

import (
	"fmt"
	"slices"

	"redline/internal/change"
	"redline/internal/doctor"
	"redline/internal/host"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "irqbalance-pinning", Section: "network", Severity: doctor.Medium,
		Title:  "irqbalance runs while NIC interrupts need pinning",
		Why:    irqbalanceRewrites + ": pins made by hand or by redline do not stay",
		Source: "K-scal; KP (stop and disable irqbalance); tuners.md (irqbalance section)",
		Reads:  []string{"interrupts", "irq", "nics", "irqbalance"},
		Needs:  doctor.NeedHost,
		Proves: []string{"/proc/*/comm irqbalance"},
		Check:  checkIrqbalance,
	})
}

func checkIrqbalance(f *doctor.Facts) doctor.Result {
	ib := f.Host.Irqbalance
	if ib.ProcessesSeen == 0 && !ib.Running {
		return doctor.Unchecked("the snapshot has no process list (no /proc/PID in this tree): whether irqbalance runs is unknown")
	}
	ev := doctor.Evidence{Source: "/proc/*/comm irqbalance", Value: fmt.Sprint(ib.Running), Note: fmt.Sprintf("%d processes read", ib.ProcessesSeen)}
	if !ib.Running {
		return doctor.Pass("irqbalance is not running").With(ev)
	}
	var wanted []int
	for _, n := range f.TargetNICs() {
		off, _, _ := offNodeIRQs(f, n)
		for _, irq := range append(off, overlapIRQs(f, n)...) {
			if !slices.Contains(ib.BannedIRQs, irq.Number) && !slices.Contains(wanted, irq.Number) {
				wanted = append(wanted, irq.Number)
			}
		}
	}
	if len(wanted) == 0 {
		return doctor.Pass("irqbalance runs; no NIC IRQ needs a manual pin").With(ev)
	}
	fix := stopIrqbalanceFix(ib, wanted)
	return doctor.Fire("irqbalance is running and %d NIC IRQ(s) need pinning (%s)", len(wanted), joinInts(wanted)).With(ev, doctor.Ev("irqbalance pids", joinInts(ib.PIDs))).WithFix(fix)
}

// stopIrqbalanceFix stops irqbalance, or (advice) bans irqs from it.
func stopIrqbalanceFix(ib host.Irqbalance, irqs []int) *doctor.Fix {
	fix := new(doctor.Fix).Set(change.KindService, "irqbalance", "inactive", "active", "stop it from moving pinned IRQs")
	fix.Advice = []string{"to keep it off after a reboot: systemctl disable irqbalance (undo: systemctl enable irqbalance)",
		fmt.Sprintf("or leave it running and exclude these IRQs: --banirq=%s in %s", joinInts(irqs), orDefault(ib.ConfigPath, "/etc/default/irqbalance"))}
	return fix
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// irqbalanceRewrites is what irqbalance does to IRQ affinity, as the
// irqbalance and irq-moving rules say it.
const irqbalanceRewrites = "irqbalance rewrites IRQ affinity every 10 s and \"may override any manual settings\""
