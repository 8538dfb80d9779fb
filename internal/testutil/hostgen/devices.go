package hostgen

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"path"
	"strings"
)

// irqs writes /proc/interrupts (kernel/irq/proc.c show_interrupts: "%*d:"
// then "%10u " per online CPU, the chip, the hwirq and flow or trigger,
// then the actions) and /proc/irq/N.
func (m *Machine) irqs(t *Tree) {
	prec := 3
	if m.IRQs[len(m.IRQs)-1].N >= 1000 {
		prec = 4
	}
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", prec+1))
	for c := 0; c < m.NCPU; c++ {
		fmt.Fprintf(&b, " %10s", fmt.Sprintf("CPU%d", c))
	}
	b.WriteString("\n")
	for _, q := range m.IRQs {
		fmt.Fprintf(&b, "%*d:", prec, q.N)
		for c := 0; c < m.NCPU; c++ {
			var n uint64
			if contains(q.Effective, c) {
				n = q.Hits
			}
			fmt.Fprintf(&b, " %10d", n)
		}
		switch m.IRQStyle {
		case StyleGIC:
			fmt.Fprintf(&b, " %8s %*d %-8s  %s", q.Chip, prec, q.HW, q.Trigger, q.Name)
		default:
			fmt.Fprintf(&b, " %8s %*d-%-8s  %s", q.Chip, prec, q.HW, q.Trigger, q.Name)
		}
		b.WriteString("\n")
		m.irqDir(t, q)
	}
	for _, c := range m.Counters(m.NCPU) {
		fmt.Fprintf(&b, "%*s:", prec, c.Name)
		if c.PerCPU == nil {
			fmt.Fprintf(&b, " %10d\n", c.Total)
			continue
		}
		for cpu := 0; cpu < m.NCPU; cpu++ {
			fmt.Fprintf(&b, " %10d", c.PerCPU(cpu))
		}
		fmt.Fprintf(&b, "   %s\n", c.Desc)
	}
	t.File("/proc/interrupts", b.String())
	t.Line("/proc/irq/default_smp_affinity", "%s", Mask(Range(0, m.NCPU-1), m.NCPU))
}

func (m *Machine) irqDir(t *Tree, q IRQ) {
	dir := fmt.Sprintf("/proc/irq/%d", q.N)
	t.Line(dir+"/smp_affinity_list", "%s", List(q.Affinity))
	t.Line(dir+"/effective_affinity_list", "%s", List(q.Effective))
	t.Line(dir+"/node", "%d", q.Node)
}

// netDir is the directory /sys/class/net/NAME links to.
func (n NIC) netDir() string {
	if n.VirtualDir != "" {
		return n.VirtualDir
	}
	return n.Device + "/net/" + n.Name
}

// nics writes /sys/class/net and the devices behind it.
func (m *Machine) nics(t *Tree) {
	dirs := map[string]string{}
	for _, n := range m.NICs {
		dirs[n.Name] = n.netDir()
	}
	for _, n := range m.NICs {
		if n.Addrs != nil {
			js, _ := json.Marshal(n.Addrs)
			t.File("/netaddr/"+n.Name+".json", string(js))
		}
		for _, l := range n.Lower {
			t.Link(n.netDir()+"/lower_"+l, relTo(n.netDir(), dirs[l]))
		}
		if n.VirtualDir != "" {
			t.Link("/sys/class/net/"+n.Name, "../.."+strings.TrimPrefix(n.VirtualDir, "/sys"))
			m.nicFiles(t, n, n.VirtualDir)
			continue
		}
		netDir := n.netDir()
		t.Link("/sys/class/net/"+n.Name, "../.."+strings.TrimPrefix(netDir, "/sys"))
		t.Link(netDir+"/device", "../../../"+path.Base(n.Device))
		t.Link(n.Device+"/driver", relTo(n.Device, "/sys/bus/"+n.DriverBus+"/drivers/"+n.Driver))
		t.Line(n.PCIDev+"/numa_node", "%d", n.NUMANode)
		t.Line(n.PCIDev+"/local_cpulist", "%s", n.LocalCPUs)
		for _, irq := range n.MSI {
			t.Line(fmt.Sprintf("%s/msi_irqs/%d", n.PCIDev, irq), "msix")
		}
		m.nicFiles(t, n, netDir)
		if n.Ethtool != "" {
			t.File("/ethtool/"+n.Name+".json", n.Ethtool)
		}
	}
}

func (m *Machine) nicFiles(t *Tree, n NIC, dir string) {
	t.Line(dir+"/mtu", "%d", n.MTU)
	t.Line(dir+"/speed", "%d", n.Speed)
	t.Line(dir+"/operstate", "%s", n.Oper)
	t.Line(dir+"/address", "%s", n.Addr)
	t.Line(dir+"/duplex", "%s", n.Duplex)
	t.Line(dir+"/tx_queue_len", "%d", n.TxQLen)
	for q := 0; q < n.RxQ; q++ {
		qd := fmt.Sprintf("%s/queues/rx-%d", dir, q)
		t.Line(qd+"/rps_cpus", "%s", n.RPS(q))
		t.Line(qd+"/rps_flow_cnt", "%d", n.FlowCnt)
	}
	for q := 0; q < n.TxQ; q++ {
		qd := fmt.Sprintf("%s/queues/tx-%d", dir, q)
		if x := n.XPS(q); x != "" {
			t.Line(qd+"/xps_cpus", "%s", x)
		} else {
			t.Link(qd+"/xps_cpus", "unreadable:ENOENT") // listed, but reading fails
		}
	}
}

// relTo returns the relative path from dir to target.
func relTo(dir, target string) string {
	d := strings.Split(strings.Trim(dir, "/"), "/")
	g := strings.Split(strings.Trim(target, "/"), "/")
	i := 0
	for i < len(d) && i < len(g) && d[i] == g[i] {
		i++
	}
	return strings.Repeat("../", len(d)-i) + strings.Join(g[i:], "/")
}

// procs writes /proc/PID for every process, /proc/self and the
// inspector's namespace and mountinfo.
func (m *Machine) procs(t *Tree) {
	t.Link("/proc/self", fmt.Sprint(m.SelfPID))
	t.Line(fmt.Sprintf("/proc/%d/comm", m.SelfPID), "redline")
	t.Link(fmt.Sprintf("/proc/%d/ns/net", m.SelfPID), fmt.Sprintf("net:[%d]", m.NetNS))
	for _, p := range m.Procs {
		dir := fmt.Sprintf("/proc/%d", p.PID)
		t.Line(dir+"/comm", "%s", p.Comm)
		if !p.Detailed {
			continue
		}
		t.File(dir+"/cmdline", strings.Join(p.Cmdline, "\x00")+"\x00")
		for _, th := range p.Threads {
			m.thread(t, p, th)
		}
		t.File(dir+"/smaps_rollup", fmt.Sprintf("55d0c0a00000-7ffd8a3f2000 ---p 00000000 00:00 0                          [rollup]\nRss:            %8d kB\nAnonymous:      %8d kB\nAnonHugePages:  %8d kB\nSwap:           %8d kB\n",
			p.VmRSSkB, p.VmRSSkB*9/10, p.AnonHugekB, p.VmSwapkB))
		t.File(dir+"/numa_maps", p.NUMAMaps)
		t.File(dir+"/limits", limitsFile(p.NoFile))
		t.Link(dir+"/ns/net", fmt.Sprintf("net:[%d]", p.NetNS))
		for fd, target := range p.Fds {
			t.Link(fmt.Sprintf("%s/fd/%d", dir, fd), target)
		}
		t.File(dir+"/cgroup", p.Cgroup)
	}
}

func (m *Machine) thread(t *Tree, p Proc, th Thread) {
	dir := fmt.Sprintf("/proc/%d/task/%d", p.PID, th.TID)
	// Fields 1-52 of stat: only the ones redline reads carry meaning.
	f := make([]string, 52)
	for i := range f {
		f[i] = "0"
	}
	f[0], f[1], f[2], f[3] = fmt.Sprint(th.TID), "("+th.Comm+")", th.State, "1"
	f[13], f[14], f[17], f[18] = fmt.Sprint(th.UTime), fmt.Sprint(th.STime), "20", "0"
	f[19], f[21], f[38] = fmt.Sprint(len(p.Threads)), "123456", fmt.Sprint(th.CPU)
	t.Line(dir+"/stat", "%s", strings.Join(f, " "))
	cpus := th.Cpus
	if cpus == "" {
		cpus = p.CpusAllowed
	}
	t.File(dir+"/status", fmt.Sprintf("Name:\t%s\nState:\t%s\nTgid:\t%d\nPid:\t%d\nVmRSS:\t%8d kB\nVmSwap:\t%8d kB\nThreads:\t%d\nCpus_allowed_list:\t%s\nMems_allowed_list:\t%s\n",
		th.Comm, th.State, p.PID, th.TID, p.VmRSSkB, p.VmSwapkB, len(p.Threads), cpus, p.Mems))
}

func limitsFile(nofile [2]string) string {
	rows := [][4]string{
		{"Max cpu time", "unlimited", "unlimited", "seconds"},
		{"Max file size", "unlimited", "unlimited", "bytes"},
		{"Max stack size", "8388608", "unlimited", "bytes"},
		{"Max processes", "1030363", "1030363", "processes"},
		{"Max open files", nofile[0], nofile[1], "files"},
		{"Max locked memory", "65536", "65536", "bytes"},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-25s %-20s %-20s %-10s\n", "Limit", "Soft Limit", "Hard Limit", "Units")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-25s %-20s %-20s %-10s\n", r[0], r[1], r[2], r[3])
	}
	return b.String()
}

// hexAddr writes an address as /proc/net/tcp does: 32-bit words in host
// (little-endian) order.
func hexAddr(s string, v6 bool) string {
	a := netip.MustParseAddr(s)
	var raw []byte
	if v6 {
		b := a.As16()
		raw = b[:]
	} else {
		b := a.As4()
		raw = b[:]
	}
	var out strings.Builder
	for i := 0; i < len(raw); i += 4 {
		fmt.Fprintf(&out, "%02X%02X%02X%02X", raw[i+3], raw[i+2], raw[i+1], raw[i])
	}
	return out.String()
}

func contains(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
