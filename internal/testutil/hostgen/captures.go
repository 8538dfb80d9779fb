package hostgen

import (
	"embed"
	"fmt"
	"path"
	"strings"
)

// captureFiles holds /proc/interrupts excerpts copied from captures as
// files (lines kept byte for byte, the header too when the capture has
// it).
//
//go:embed captures/*.interrupts
var captureFiles embed.FS

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
	// netutils-linux's test data: whole machines (lscpu, ethtool -i,
	// lspci, /proc/interrupts) sent in by its users.
	"netutils-mlx4-bnx2-2socket":  NetutilsMlx4Capture,
	"netutils-qlcnic-2socket":     NetutilsQlcnicCapture,
	"netutils-igb-ixgbe-2socket":  NetutilsIgbIxgbeCapture,
	"netutils-mlx5-q6700":         NetutilsMlx5Capture,
	"netutils-tg3-mlx4-2socket":   NetutilsTg3Mlx4Capture,
	"netutils-e1000e-igb-2socket": NetutilsE1000eIgbCapture,
	"netutils-i40e-e1000e-e3":     NetutilsI40eE1000eCapture,
	"vmware-vmxnet3-8cpu":         VmxnetCapture,
	"chelsio-cxgb4-2port":         CxgbCapture,
	"azure-mana-4cpu":             ManaCapture,
	"xen-netfront-8queue":         XenNetfrontCapture,
	"xen-netfront-1queue":         XenNetfrontSingleCapture,
	"intel-stmmac-4cpu":           StmmacIntelCapture,
	"nxp-enetc-imx95":             EnetcIMX95Capture,
}

// Capture is a fixture built from a public capture.
type Capture struct {
	NCPU int
	// Interrupts are the capture's /proc/interrupts lines, verbatim,
	// without the header (written from NCPU).
	Interrupts []string
	// InterruptsFile names an excerpt in captures/ written as
	// /proc/interrupts instead of Interrupts (header included).
	InterruptsFile string
	// Nodes are the NUMA nodes' CPU lists as the capture's lscpu shows
	// them ("NUMA node0 CPU(s): 0-11,24-35"); none when it does not.
	Nodes []string
	NICs  []CaptureNIC
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
	if c.InterruptsFile != "" {
		data, err := captureFiles.ReadFile("captures/" + c.InterruptsFile)
		if err != nil {
			panic(err) // embedded at build time: a missing file is a bug here
		}
		t.File("/proc/interrupts", string(data))
	} else {
		c.interrupts(t)
	}
	c.nodes(t)
	for _, n := range c.NICs {
		n.files(t, c.NCPU)
	}
	return t
}

// nodes writes what lscpu's node lines show: the CPUs online and each
// node's CPU list.
func (c *Capture) nodes(t *Tree) {
	if len(c.Nodes) == 0 {
		return
	}
	all := fmt.Sprintf("0-%d", c.NCPU-1)
	t.Line("/sys/devices/system/cpu/online", "%s", all)
	t.Line("/sys/devices/system/cpu/possible", "%s", all)
	t.Line("/sys/devices/system/node/online", "0-%d", len(c.Nodes)-1)
	for i, cpus := range c.Nodes {
		t.Line(fmt.Sprintf("/sys/devices/system/node/node%d/cpulist", i), "%s", cpus)
	}
}

// interrupts writes the header from NCPU and the capture's lines.
func (c *Capture) interrupts(t *Tree) {
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
