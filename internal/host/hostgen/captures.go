package hostgen

import (
	"fmt"
	"path"
	"strings"
)

// Captures lists the NIC fixtures built from public captures of real
// machines (bug reports, issues), by fixture name. Unlike Models they
// hold only what the capture shows: its /proc/interrupts lines verbatim,
// and the sysfs entries that place the NIC (its device and queues).
// Each tree's SOURCE cites the capture and says what is modelled.
var Captures = map[string]func() *Capture{
	"aws-ena-pcimsix":     ENACapture,
	"intel-ice-e810":      IceCapture,
	"intel-i40e-guest":    I40ECapture,
	"gce-gve":             GVECapture,
	"kvm-virtio-nodriver": VirtioHotplugCapture,
	"realtek-r8125-ifn":   R8125Capture,
}

// Capture is a fixture built from a public capture.
type Capture struct {
	NCPU int
	// Interrupts are the capture's /proc/interrupts lines, verbatim,
	// without the header (written from NCPU).
	Interrupts []string
	NICs       []CaptureNIC
}

// CaptureNIC is a NIC of a capture.
type CaptureNIC struct {
	Name string
	// Driver is "" when the capture does not show it: the tree then has
	// no driver link.
	Driver    string
	DriverBus string
	// Device is the NIC's canonical device path, ending in the PCI
	// function or the virtio device.
	Device   string
	RxQ, TxQ int
}

// Build writes the capture's files.
func (c *Capture) Build() *Tree {
	t := NewTree()
	var b strings.Builder
	b.WriteString("    ")
	for i := 0; i < c.NCPU; i++ {
		fmt.Fprintf(&b, " %10s", fmt.Sprintf("CPU%d", i))
	}
	b.WriteString("\n")
	for _, l := range c.Interrupts {
		b.WriteString(l + "\n")
	}
	t.File("/proc/interrupts", b.String())
	for _, n := range c.NICs {
		n.files(t, c.NCPU)
	}
	return t
}

// files writes the NIC's sysfs entries: the class link, the device and
// driver links, and the kernel's defaults in each queue directory.
func (n CaptureNIC) files(t *Tree, ncpu int) {
	netDir := n.Device + "/net/" + n.Name
	t.Link("/sys/class/net/"+n.Name, "../.."+strings.TrimPrefix(netDir, "/sys"))
	t.Link(netDir+"/device", "../../../"+path.Base(n.Device))
	if n.Driver != "" {
		t.Link(n.Device+"/driver", relTo(n.Device, "/sys/bus/"+n.DriverBus+"/drivers/"+n.Driver))
	}
	for q := 0; q < n.RxQ; q++ {
		qd := fmt.Sprintf("%s/queues/rx-%d", netDir, q)
		t.Line(qd+"/rps_cpus", "%s", Mask(nil, ncpu))
		t.Line(qd+"/rps_flow_cnt", "0")
	}
	for q := 0; q < n.TxQ; q++ {
		t.Line(fmt.Sprintf("%s/queues/tx-%d/tx_maxrate", netDir, q), "0")
	}
}
