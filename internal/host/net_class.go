package host

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// NICs live in /sys/class/net, one symlink per interface into the device
// tree:
//
//	eth0 -> ../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth0
//	lo   -> ../../devices/virtual/net/lo
//	eth0/mtu         1400
//	eth0/speed       -1          (EINVAL while the link is down)
//	eth0/device      -> ../../../virtio2
//	eth0/device/driver -> ../../../../bus/virtio/drivers/virtio_net
//	.../0000:00:03.0/numa_node       -1   (virtio: one level up from device)
//	.../0000:00:03.0/local_cpulist   0-1
//	.../0000:00:03.0/msi_irqs/{37,38,39}
func readNICs(r *reader) error {
	const base = "/sys/class/net"
	for _, e := range r.dir(base) {
		if !e.Dir { // bonding_masters is a file
			continue
		}
		src := r.source
		r.source = "nic " + e.Name
		r.snap.NICs = append(r.snap.NICs, readNIC(r, base+"/"+e.Name, e.Name))
		r.source = src
	}
	inferred := !r.fs.Live() && !r.fs.Exists(base)
	if inferred {
		// A capture of /proc/interrupts alone: its IRQ names are the only
		// word on the NICs (never on the live machine, which has sysfs).
		r.snap.NICs = interruptNICs(&r.snap.Interrupts)
	}
	mapQueueIRQs(r)
	if inferred {
		r.snap.NICs = keepInferred(r.snap.NICs)
	}
	return nil
}

func readNIC(r *reader, dir, name string) NIC {
	n := NIC{Name: name, RxQueues: []RxQueue{}, TxQueues: []TxQueue{}}
	if canon, err := r.fs.EvalSymlinks(dir); err == nil {
		n.Virtual = strings.HasPrefix(canon, "/sys/devices/virtual/")
	}
	n.OperState, _ = r.str(dir + "/operstate")
	n.Address, _ = r.str(dir + "/address")
	n.MTU, _ = r.int(dir + "/mtu")
	if sp, ok := r.int(dir + "/speed"); ok && *sp >= 0 {
		n.SpeedMbps = sp
	}
	n.Duplex, _ = r.str(dir + "/duplex")
	n.TxQueueLen, _ = r.int(dir + "/tx_queue_len")
	if dev, err := r.fs.EvalSymlinks(dir + "/device"); err == nil {
		n.Device = dev
		readNICDevice(r, &n)
	}
	readQueues(r, dir+"/queues", &n)
	return n
}

// pciAddress matches a PCI function's sysfs name, domain included.
var pciAddress = regexp.MustCompile(`^[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`)

// readNICDevice finds the driver, and walks up from the device to the PCI
// function for the PCI address, NUMA node, local CPUs and MSI IRQs.
func readNICDevice(r *reader, n *NIC) {
	if target, err := r.fs.Readlink(n.Device + "/driver"); err == nil {
		n.Driver = path.Base(target)
	}
	for p := n.Device; strings.HasPrefix(p, "/sys/devices/"); p = path.Dir(p) {
		if n.NUMANode == nil {
			if v, ok := r.int(p + "/numa_node"); ok {
				n.NUMANode, n.NUMANodeFrom = v, p+"/numa_node"
			}
		}
		if n.LocalCPUs == nil {
			n.LocalCPUs, _ = r.cpuList(p + "/local_cpulist")
		}
		if pciAddress.MatchString(path.Base(p)) {
			n.PCIAddress = path.Base(p)
			n.MSIIRQs = numbered(r.dir(p+"/msi_irqs"), "")
			break // the PCI function is as far as NIC facts go
		}
	}
}

// readQueues reads rx-N and tx-N under /sys/class/net/IF/queues:
//
//	rx-0/rps_cpus      00000000,00000000
//	rx-0/rps_flow_cnt  0
//	tx-0/xps_cpus      (listed, but reading it fails on a single-queue NIC)
func readQueues(r *reader, dir string, n *NIC) {
	ents := r.dir(dir)
	for _, i := range numbered(ents, "rx-") {
		q := RxQueue{Index: i}
		qdir := fmt.Sprintf("%s/rx-%d", dir, i)
		q.RPSCPUs, q.RPSUnsupported = r.queueMask(qdir + "/rps_cpus")
		q.RPSFlowCnt, _ = r.int(qdir + "/rps_flow_cnt")
		n.RxQueues = append(n.RxQueues, q)
	}
	for _, i := range numbered(ents, "tx-") {
		q := TxQueue{Index: i}
		q.XPSCPUs, q.XPSUnsupported = r.queueMask(fmt.Sprintf("%s/tx-%d/xps_cpus", dir, i))
		n.TxQueues = append(n.TxQueues, q)
	}
}

// queueMask reads an rps_cpus/xps_cpus mask. A file that is listed but
// cannot be read makes unsupported true: the feature does not apply to
// this queue (a single-queue virtio NIC's xps_cpus fails with ENOENT).
func (r *reader) queueMask(p string) (set *CPUSet, unsupported bool) {
	data, err := r.fs.ReadFile(p)
	switch {
	case err == nil:
		v, perr := ParseCPUMask(string(data))
		if perr != nil {
			r.fail(&ParseError{Path: p, Line: 1, Err: perr})
			return nil, false
		}
		return &v, false
	case isAbsent(err):
		return nil, r.fs.Exists(p)
	case isUnsupported(err):
		return nil, true
	}
	r.fail(permissionHint(err))
	return nil, false
}

// NIC returns the NIC with the given name, or nil.
func (s *Snapshot) NIC(name string) *NIC {
	for i := range s.NICs {
		if s.NICs[i].Name == name {
			return &s.NICs[i]
		}
	}
	return nil
}
