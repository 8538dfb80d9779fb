package hostgen

import (
	"fmt"
	"sort"
	"strings"
)

// Machine describes a host well enough to write the files redline reads.
type Machine struct {
	Release, Version, Cmdline, Hostname string
	ArchSysctl                          string // /proc/sys/kernel/arch ("" = absent, as before 5.19)
	CPUInfo                             func(cpu int) string

	NCPU      int
	Topo      func(cpu int) Topo
	Nodes     [][]int
	NodeMemKB []uint64 // total per node; free is 90 %
	Distances [][]int
	SMT       *bool

	Freq       *Freq // nil: no cpufreq (common in VMs)
	IdleDriver string
	IdleGov    string
	Idle       []Idle

	Clocksource, Clocksources string
	DMIVendor, DMIProduct     string

	THPEnabled, THPDefrag string
	Sysctls               map[string]string
	Meminfo, VMStat       string

	IRQStyle      IRQStyle
	IRQs          []IRQ
	Counters      func(ncpu int) []Counter
	SoftnetFields int // 13 (5.10-5.x) or 15 (6.x)

	NICs []NIC

	SelfPID  int
	NetNS    uint64 // the inspector's
	Procs    []Proc
	TCP      map[string][]Sock // "/proc/net" or "/proc/PID/net" -> sockets
	Netstat  string
	Sockstat string
	// Files are any other files, by path (cgroup files, /etc, mountinfo).
	Files map[string]string
	Links map[string]string
}

// Topo is one CPU's place.
type Topo struct {
	Package, Core int
	Cluster, Die  int // -1: file absent
	Siblings      []int
	Online        bool
}

// Freq is one cpufreq policy per CPU, all alike.
type Freq struct {
	Driver, Governor, Governors, EPP string
	CurKHz, MinKHz, MaxKHz           int
	HWMinKHz, HWMaxKHz               int
}

// Idle is one cpuidle state.
type Idle struct {
	Name               string
	Latency, Residency int
	Disabled           bool
}

// IRQStyle picks how /proc/interrupts prints the chip columns.
type IRQStyle int

// IRQ styles.
const (
	StyleX86 IRQStyle = iota // "PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0" (6.2+) or "IR-PCI-MSI 1048576-edge  x" (older)
	StyleGIC                 // "ITS-MSI 13107200 Edge      enp25s0_qp0"
)

// IRQ is one numbered interrupt.
type IRQ struct {
	N                   int
	Chip                string
	HW                  int
	Trigger             string // "edge", "fasteoi" (x86); "Edge", "Level" (GIC)
	Name                string
	Affinity, Effective []int
	Node                int
	Hits                uint64 // the count on each effective CPU
}

// Counter is a named row of /proc/interrupts.
type Counter struct {
	Name, Desc string
	PerCPU     func(cpu int) uint64 // nil: one total column (ERR, MIS, Err)
	Total      uint64
}

// NIC is a network interface and its device.
type NIC struct {
	Name, Driver string
	// Device is the canonical sysfs path of the NIC's device
	// ("/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0"); "" for a
	// virtual NIC. For virtio it ends in the virtio device (…/virtio1).
	Device     string
	DriverBus  string // "pci" or "virtio"
	PCIDev     string // the PCI function directory (== Device unless virtio)
	NUMANode   int
	LocalCPUs  string
	MSI        []int
	MTU        int
	Speed      int // -1 unknown
	Oper       string
	Addr       string
	Duplex     string
	TxQLen     int
	RxQ, TxQ   int
	RPS        func(q int) string // mask text
	XPS        func(q int) string // "" = listed but unreadable
	FlowCnt    int
	Ethtool    string   // JSON, "" = none captured
	VirtualDir string   // for virtual NICs: /sys/devices/virtual/net/NAME
	Addrs      []string // IP addresses with prefix ("10.0.0.7/24")
	Lower      []string // names of lower devices (a VLAN's parent, bond slaves)
}

// Proc is a process.
type Proc struct {
	PID         int
	Comm        string
	Cmdline     []string
	Threads     []Thread
	CpusAllowed string
	Mems        string
	VmRSSkB     uint64
	VmSwapkB    uint64
	AnonHugekB  uint64
	NUMAMaps    string
	NoFile      [2]string
	NetNS       uint64
	Fds         map[int]string
	Cgroup      string
	Detailed    bool // false: only comm (a process that is not Redis)
}

// Thread is one thread of a process.
type Thread struct {
	TID          int
	Comm, State  string
	CPU          int
	UTime, STime uint64
	Cpus         string // "" = the process's
}

// Sock is a row of /proc/net/tcp or tcp6.
type Sock struct {
	V6            bool
	Local, Remote string // "127.0.0.1", "::", "192.168.100.2"
	LPort, RPort  int
	State         int
	Inode         uint64
}

// Build writes the machine's files.
func (m *Machine) Build() *Tree {
	t := NewTree()
	m.kernel(t)
	m.cpus(t)
	m.numa(t)
	m.irqs(t)
	m.nics(t)
	m.misc(t)
	m.procs(t)
	for p, c := range m.Files {
		t.File(p, c)
	}
	for p, l := range m.Links {
		t.Link(p, l)
	}
	return t
}

func (m *Machine) kernel(t *Tree) {
	t.Line("/proc/sys/kernel/osrelease", "%s", m.Release)
	t.Line("/proc/version", "%s", m.Version)
	t.Line("/proc/cmdline", "%s", m.Cmdline)
	t.Line("/proc/sys/kernel/hostname", "%s", m.Hostname)
	if m.ArchSysctl != "" {
		t.Line("/proc/sys/kernel/arch", "%s", m.ArchSysctl)
	}
	var b strings.Builder
	for c := 0; c < m.NCPU; c++ {
		b.WriteString(m.CPUInfo(c))
		b.WriteString("\n")
	}
	t.File("/proc/cpuinfo", b.String())
}

func (m *Machine) cpus(t *Tree) {
	const base = "/sys/devices/system/cpu"
	all := fmt.Sprintf("0-%d", m.NCPU-1)
	var online []int
	for c := 0; c < m.NCPU; c++ {
		if m.Topo(c).Online {
			online = append(online, c)
		}
	}
	t.Line(base+"/online", "%s", List(online))
	t.Line(base+"/possible", "%s", all)
	t.Line(base+"/present", "%s", all)
	t.Line(base+"/isolated", "")
	if m.SMT != nil {
		t.Line(base+"/smt/active", "%d", b2i(*m.SMT))
	}
	for c := 0; c < m.NCPU; c++ {
		tp := m.Topo(c)
		if !tp.Online {
			continue
		}
		dir := fmt.Sprintf("%s/cpu%d/topology", base, c)
		t.Line(dir+"/physical_package_id", "%d", tp.Package)
		t.Line(dir+"/core_id", "%d", tp.Core)
		if tp.Cluster >= 0 {
			t.Line(dir+"/cluster_id", "%d", tp.Cluster)
		}
		if tp.Die >= 0 {
			t.Line(dir+"/die_id", "%d", tp.Die)
		}
		t.Line(dir+"/thread_siblings_list", "%s", List(tp.Siblings))
		m.cpuIdle(t, c)
		m.cpuFreq(t, c)
	}
	if m.IdleDriver != "" {
		t.Line(base+"/cpuidle/current_driver", "%s", m.IdleDriver)
		t.Line(base+"/cpuidle/current_governor_ro", "%s", m.IdleGov)
	}
}

func (m *Machine) cpuIdle(t *Tree, c int) {
	for k, st := range m.Idle {
		dir := fmt.Sprintf("/sys/devices/system/cpu/cpu%d/cpuidle/state%d", c, k)
		t.Line(dir+"/name", "%s", st.Name)
		t.Line(dir+"/latency", "%d", st.Latency)
		t.Line(dir+"/residency", "%d", st.Residency)
		t.Line(dir+"/disable", "%d", b2i(st.Disabled))
	}
}

func (m *Machine) cpuFreq(t *Tree, c int) {
	f := m.Freq
	if f == nil {
		return
	}
	dir := fmt.Sprintf("/sys/devices/system/cpu/cpufreq/policy%d", c)
	t.Line(dir+"/affected_cpus", "%d", c)
	t.Line(dir+"/scaling_driver", "%s", f.Driver)
	t.Line(dir+"/scaling_governor", "%s", f.Governor)
	t.Line(dir+"/scaling_available_governors", "%s", f.Governors)
	t.Line(dir+"/scaling_cur_freq", "%d", f.CurKHz+(c%7)*1000)
	t.Line(dir+"/scaling_min_freq", "%d", f.MinKHz)
	t.Line(dir+"/scaling_max_freq", "%d", f.MaxKHz)
	t.Line(dir+"/cpuinfo_min_freq", "%d", f.HWMinKHz)
	t.Line(dir+"/cpuinfo_max_freq", "%d", f.HWMaxKHz)
	if f.EPP != "" {
		t.Line(dir+"/energy_performance_preference", "%s", f.EPP)
	}
}

func (m *Machine) numa(t *Tree) {
	const base = "/sys/devices/system/node"
	var ids []int
	for i := range m.Nodes {
		ids = append(ids, i)
	}
	t.Line(base+"/online", "%s", List(ids))
	for i, cpus := range m.Nodes {
		dir := fmt.Sprintf("%s/node%d", base, i)
		t.Line(dir+"/cpulist", "%s", List(cpus))
		total := m.NodeMemKB[i]
		free := total * 9 / 10
		t.File(dir+"/meminfo", fmt.Sprintf("Node %d MemTotal:       %d kB\nNode %d MemFree:        %d kB\nNode %d MemUsed:        %d kB\n",
			i, total, i, free, i, total-free))
		var d []string
		for _, v := range m.Distances[i] {
			d = append(d, fmt.Sprint(v))
		}
		t.Line(dir+"/distance", "%s", strings.Join(d, " "))
	}
}

func (m *Machine) misc(t *Tree) {
	cs := "/sys/devices/system/clocksource/clocksource0"
	t.Line(cs+"/current_clocksource", "%s", m.Clocksource)
	t.Line(cs+"/available_clocksource", "%s ", m.Clocksources)
	if m.DMIVendor != "" {
		t.Line("/sys/class/dmi/id/sys_vendor", "%s", m.DMIVendor)
		t.Line("/sys/class/dmi/id/product_name", "%s", m.DMIProduct)
	}
	t.Line("/sys/kernel/mm/transparent_hugepage/enabled", "%s", m.THPEnabled)
	t.Line("/sys/kernel/mm/transparent_hugepage/defrag", "%s", m.THPDefrag)
	for name, v := range m.Sysctls {
		t.Line("/proc/sys/"+strings.ReplaceAll(name, ".", "/"), "%s", v)
	}
	t.File("/proc/meminfo", m.Meminfo)
	t.File("/proc/vmstat", m.VMStat)
	t.File("/proc/net/netstat", m.Netstat)
	t.File("/proc/net/sockstat", m.Sockstat)
	m.softnet(t)
	m.softirqs(t)
	m.stat(t)
	for dir, socks := range m.TCP {
		t.File(dir+"/tcp", tcpTable(socks, false))
		t.File(dir+"/tcp6", tcpTable(socks, true))
	}
}

func (m *Machine) softnet(t *Tree) {
	var b strings.Builder
	for c := 0; c < m.NCPU; c++ {
		f := make([]uint64, m.SoftnetFields)
		f[0] = uint64(1000 + 37*c)
		if c%17 == 3 {
			f[2] = uint64(c) // time_squeeze on a few CPUs
		}
		if m.SoftnetFields >= 13 {
			f[12] = uint64(c)
		}
		for i, v := range f {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%08x", v)
		}
		b.WriteByte('\n')
	}
	t.File("/proc/net/softnet_stat", b.String())
}

// stat writes /proc/stat's CPU lines: CPUs that take a busy queue IRQ
// spend a lot of time in softirq.
func (m *Machine) stat(t *Tree) {
	hot := map[int]bool{}
	for _, q := range m.IRQs {
		if q.Hits >= 1000000 && len(q.Effective) < m.NCPU {
			for _, c := range q.Effective {
				hot[c] = true
			}
		}
	}
	var b strings.Builder
	var sum [8]uint64
	lines := make([]string, m.NCPU)
	for c := 0; c < m.NCPU; c++ {
		v := [8]uint64{uint64(400000 + 1009*c), uint64(120 + c), uint64(150000 + 503*c), uint64(9000000 - 2003*c), uint64(2100 + c), 0, uint64(5000 + 17*c), 0}
		if hot[c] {
			v[6] += 650000
			v[3] -= 650000
		}
		for i := range v {
			sum[i] += v[i]
		}
		lines[c] = fmt.Sprintf("cpu%d %d %d %d %d %d %d %d %d 0 0\n", c, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7])
	}
	fmt.Fprintf(&b, "cpu  %d %d %d %d %d %d %d %d 0 0\n", sum[0], sum[1], sum[2], sum[3], sum[4], sum[5], sum[6], sum[7])
	b.WriteString(strings.Join(lines, ""))
	b.WriteString("intr 91234567 44 9 0 0\nctxt 812345678\nbtime 1732812345\nprocesses 123456\nprocs_running 3\nprocs_blocked 0\nsoftirq 71234567 0 1234567 12 5123456 0 0 123 2345678 0 912345\n")
	t.File("/proc/stat", b.String())
}

func (m *Machine) softirqs(t *Tree) {
	var b strings.Builder
	b.WriteString("                ")
	for c := 0; c < m.NCPU; c++ {
		fmt.Fprintf(&b, " %10s", fmt.Sprintf("CPU%d", c))
	}
	b.WriteString("\n")
	for i, name := range []string{"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"} {
		fmt.Fprintf(&b, "%12s:", name)
		for c := 0; c < m.NCPU; c++ {
			fmt.Fprintf(&b, " %10d", (i*131+c*17)%9973*(i%3))
		}
		b.WriteString("\n")
	}
	t.File("/proc/softirqs", b.String())
}

func tcpTable(socks []Sock, v6 bool) string {
	var b strings.Builder
	if v6 {
		b.WriteString("  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n")
	} else {
		b.WriteString("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode                                                     \n")
	}
	n := 0
	for _, s := range socks {
		if s.V6 != v6 {
			continue
		}
		fmt.Fprintf(&b, "%4d: %s:%04X %s:%04X %02X 00000000:00000000 00:00000000 00000000   999        0 %d 1 0000000000000000 100 0 0 10 0\n",
			n, hexAddr(s.Local, v6), s.LPort, hexAddr(s.Remote, v6), s.RPort, s.State, s.Inode)
		n++
	}
	return b.String()
}

// List formats CPUs as a cpulist.
func List(cpus []int) string {
	c := append([]int(nil), cpus...)
	sort.Ints(c)
	var parts []string
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", c[i], c[j]))
		} else {
			parts = append(parts, fmt.Sprint(c[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// Mask formats CPUs as a kernel cpumask for nbits CPUs.
func Mask(cpus []int, nbits int) string {
	digits := (nbits + 3) / 4
	nib := make([]byte, digits)
	for _, c := range cpus {
		nib[c/4] |= 1 << uint(c%4)
	}
	var b strings.Builder
	for d := digits - 1; d >= 0; d-- {
		b.WriteByte("0123456789abcdef"[nib[d]])
		if d > 0 && d%8 == 0 {
			b.WriteByte(',')
		}
	}
	return b.String()
}

// Range returns lo..hi.
func Range(lo, hi int) []int {
	var out []int
	for c := lo; c <= hi; c++ {
		out = append(out, c)
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
