package host

import "fmt"

// Each IRQ's settings live in /proc/irq/N:
//
//	smp_affinity_list        0-1   (where the IRQ may be delivered)
//	effective_affinity_list  1     (where it is; absent without
//	                                CONFIG_GENERIC_IRQ_EFFECTIVE_AFF_MASK)
//	node                     -1
//
// and the default for new IRQs in /proc/irq/default_smp_affinity (a hex
// mask: 3).
func readIRQSettings(r *reader) error {
	r.snap.Interrupts.DefaultAffinity, _ = r.cpuMask("/proc/irq/default_smp_affinity")
	for i := range r.snap.Interrupts.IRQs {
		q := &r.snap.Interrupts.IRQs[i]
		dir := fmt.Sprintf("/proc/irq/%d", q.Number)
		q.Affinity, _ = r.cpuList(dir + "/smp_affinity_list")
		q.Effective, _ = r.cpuList(dir + "/effective_affinity_list")
		q.Node, _ = r.int(dir + "/node")
	}
	return nil
}
