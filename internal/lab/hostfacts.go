package lab

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"redline/internal/host"
	"redline/internal/labdata"
)

// hostFacts reads the short description of this machine.
func hostFacts() labdata.HostFacts {
	fs, err := host.NewFS("/")
	var snap *host.Snapshot
	if err == nil {
		snap, err = host.Read(fs, host.Options{NoProcesses: true})
	}
	if err != nil || snap == nil {
		h := labdata.HostFacts{Arch: runtime.GOARCH, CPUs: runtime.NumCPU()}
		h.Hostname, _ = os.Hostname()
		h.Notes = append(h.Notes, fmt.Sprintf("host facts incomplete: %v", err))
		return h
	}
	h := HostFactsOf(snap)
	h.CPUs = runtime.NumCPU() // the CPUs this process may use
	if h.Arch == "" {
		h.Arch = runtime.GOARCH
	}
	if h.Hostname == "" {
		h.Hostname, _ = os.Hostname()
	}
	return h
}

// HostFactsOf is the short description of the machine snap was read on:
// the lab's own, or a server host's read by its session.
func HostFactsOf(snap *host.Snapshot) labdata.HostFacts {
	h := labdata.HostFacts{Hostname: snap.Hostname, Kernel: snap.Kernel.Release, Arch: snap.Kernel.Arch,
		CPUModel: snap.CPU.ModelName, CPUs: snap.CPU.Threads, NUMANodes: max(len(snap.NUMA.Nodes), 1)}
	if snap.Memory.MemTotal != nil {
		h.MemoryMiB = int64(*snap.Memory.MemTotal / (1 << 20))
	}
	if v := snap.Virtualization; v != nil && v.Hypervisor {
		h.Virtual = strings.TrimSpace(v.Vendor + " " + v.Product)
		if h.Virtual == "" {
			h.Virtual = "hypervisor"
		}
	}
	for _, n := range snap.NICs {
		if !n.Virtual {
			h.NICs = append(h.NICs, nicLine(n))
			h.IRQMap = append(h.IRQMap, irqLines(snap, n)...)
		}
	}
	return h
}

func nicLine(n host.NIC) string {
	node := "unknown"
	if n.NUMANode != nil {
		node = fmt.Sprint(*n.NUMANode)
	}
	return fmt.Sprintf("%s %s node %s queues %d", n.Name, n.Driver, node, len(n.RxQueues))
}

// irqLines says where each of a NIC's queue interrupts is delivered (the
// effective affinity when the kernel tells it).
func irqLines(snap *host.Snapshot, n host.NIC) []string {
	byNum := map[int]*host.IRQ{}
	for i := range snap.Interrupts.IRQs {
		byNum[snap.Interrupts.IRQs[i].Number] = &snap.Interrupts.IRQs[i]
	}
	var out []string
	for _, q := range n.QueueIRQs {
		line := fmt.Sprintf("%s %s-%d: irq %d", n.Name, q.Kind, q.Queue, q.IRQ)
		if irq := byNum[q.IRQ]; irq != nil {
			set := irq.Effective
			if set == nil {
				set = irq.Affinity
			}
			if set != nil {
				line += " -> CPUs " + set.String()
				if nodes := snap.NodesOf(*set); len(nodes) > 0 {
					line += fmt.Sprintf(" (node %s)", strings.Trim(strings.Join(strings.Fields(fmt.Sprint(nodes)), ","), "[]"))
				}
			}
		}
		out = append(out, line)
	}
	return out
}
