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
	h := labdata.HostFacts{Arch: runtime.GOARCH, CPUs: runtime.NumCPU()}
	h.Hostname, _ = os.Hostname()
	fs, err := host.NewFS("/")
	var snap *host.Snapshot
	if err == nil {
		snap, err = host.Read(fs, host.Options{NoProcesses: true})
	}
	if err != nil || snap == nil {
		h.Notes = append(h.Notes, fmt.Sprintf("host facts incomplete: %v", err))
		return h
	}
	h.Kernel = snap.Kernel.Release
	if snap.Kernel.Arch != "" {
		h.Arch = snap.Kernel.Arch
	}
	h.CPUModel = snap.CPU.ModelName
	h.NUMANodes = max(len(snap.NUMA.Nodes), 1)
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
