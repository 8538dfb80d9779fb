package host

import (
	"time"

	"redline/internal/host/kernel"
)

// SchemaVersion is the version of Snapshot's JSON schema (docs/inspect.md).
// It changes when a field is removed or changes meaning, not when one is
// added.
const SchemaVersion = 1

// Snapshot is what a host is: CPUs and NUMA nodes, interrupts, NICs with
// their queues and queue IRQs, sysctls, memory settings, cgroup limits and
// the Redis processes. Read builds it from a live machine or a fixture
// tree; both give the same type, and it serialises to the JSON documented
// in docs/inspect.md.
//
// Optional facts are pointers, nil slices or empty strings, and omitted
// from JSON: absent means the host has no such file (an older kernel, no
// cpufreq in a VM), which is different from zero. Errors holds what could
// not be read or parsed; everything else is still there.
type Snapshot struct {
	Schema int    `json:"schema"`
	Source Source `json:"source"`

	Hostname       string          `json:"hostname,omitempty"`
	Kernel         Kernel          `json:"kernel"`
	Virtualization *Virtualization `json:"virtualization,omitempty"`
	Container      Container       `json:"container"`

	CPU         CPUTopology  `json:"cpu"`
	NUMA        NUMA         `json:"numa"`
	Clocksource *Clocksource `json:"clocksource,omitempty"`

	Interrupts Interrupts `json:"interrupts"`
	NICs       []NIC      `json:"nics"`
	Irqbalance Irqbalance `json:"irqbalance"`

	// Sysctls maps dotted names ("net.core.somaxconn") to the raw value
	// with whitespace collapsed ("4096	131072	6291456" -> "4096 131072
	// 6291456"), read in the inspector's network namespace. Names the
	// kernel does not have are missing. See SysctlNames.
	Sysctls Sysctls `json:"sysctls"`

	THP      *THP      `json:"thp,omitempty"`
	Memory   Meminfo   `json:"memory"`
	VMStat   VMStat    `json:"vmstat"`
	Softnet  []Softnet `json:"softnet,omitempty"`
	Softirqs *Softirqs `json:"softirqs,omitempty"`
	Net      NetStats  `json:"net"`

	Processes []Process `json:"processes"`
	// UnseenProcesses are the processes of the scan that could not be
	// described at all (their /proc/PID/task refused): each also has a
	// permission error in Errors. Placement says it could not keep off
	// their CPUs.
	UnseenProcesses []UnseenProcess `json:"unseen_processes,omitempty"`
	// OtherServers are the pids of the processes named like a Redis
	// server that were not described because Options.PIDs named others:
	// they share the host's memory with the ones described.
	OtherServers []int `json:"other_servers,omitempty"`

	Errors []SourceError `json:"errors,omitempty"`
}

// Source says where a snapshot was read from.
type Source struct {
	Root string `json:"root"`
	Proc string `json:"proc,omitempty"` // when not Root/proc
	Sys  string `json:"sys,omitempty"`  // when not Root/sys
	Live bool   `json:"live"`
	// AsRoot is true when a live snapshot was read by root: what it could
	// not read, the kernel refused to root too (a container, a security
	// module), and "run as root" would be no advice.
	AsRoot bool `json:"as_root,omitempty"`
	// Time is when a live snapshot was taken; zero (omitted) for fixture
	// trees so their JSON is reproducible.
	Time *time.Time `json:"time,omitempty"`
}

// Kernel is the running kernel.
type Kernel struct {
	Release string `json:"release,omitempty"` // /proc/sys/kernel/osrelease
	Version string `json:"version,omitempty"` // /proc/version
	Arch    string `json:"arch,omitempty"`    // /proc/sys/kernel/arch, else guessed from /proc/cpuinfo
	Cmdline string `json:"cmdline,omitempty"` // /proc/cmdline
	// Params are the command line's parameters; a bare flag maps to "".
	// The last of repeated parameters wins.
	Params map[string]string `json:"params,omitempty"`
}

// Virtualization says whether the kernel runs under a hypervisor.
type Virtualization struct {
	Hypervisor bool   `json:"hypervisor"`        // the "hypervisor" CPU flag
	Type       string `json:"type,omitempty"`    // /sys/hypervisor/type ("xen")
	Vendor     string `json:"vendor,omitempty"`  // DMI sys_vendor ("QEMU", "Amazon EC2")
	Product    string `json:"product,omitempty"` // DMI product_name
}

// Container says whether the inspector runs inside a container, and why it
// thinks so. In a container /proc/sys and /proc/irq are often read-only,
// so tuning drops to report-only.
type Container struct {
	Detected bool     `json:"detected"`
	Kind     string   `json:"kind,omitempty"` // docker, podman, kubernetes, lxc, systemd-nspawn, container
	Evidence []string `json:"evidence,omitempty"`
	// ProcSysReadOnly is true when /proc/sys is mounted read-only.
	ProcSysReadOnly bool `json:"proc_sys_read_only,omitempty"`
	// SysReadOnly is true when /sys is mounted read-only.
	SysReadOnly bool `json:"sys_read_only,omitempty"`
}

// CPUTopology is the machine's CPUs.
type CPUTopology struct {
	Vendor    string `json:"vendor,omitempty"`     // /proc/cpuinfo vendor_id or CPU implementer
	ModelName string `json:"model_name,omitempty"` // /proc/cpuinfo model name (or CPU part on arm64)

	Online   *CPUSet `json:"online,omitempty"`
	Possible *CPUSet `json:"possible,omitempty"`
	Present  *CPUSet `json:"present,omitempty"`
	Isolated *CPUSet `json:"isolated,omitempty"`  // isolcpus=
	NohzFull *CPUSet `json:"nohz_full,omitempty"` // nohz_full=
	// SMTActive is /sys/devices/system/cpu/smt/active.
	SMTActive *bool `json:"smt_active,omitempty"`

	// Packages, Cores and Threads count the online CPUs' sockets,
	// physical cores and hardware threads.
	Packages int `json:"packages"`
	Cores    int `json:"cores"`
	Threads  int `json:"threads"`

	// CPUs lists every possible CPU (offline ones with Online false and
	// no topology).
	CPUs []CPU `json:"cpus"`

	// Freq lists the cpufreq policies; empty without cpufreq (common in
	// VMs).
	Freq []FreqPolicy `json:"freq,omitempty"`
	// Times are /proc/stat's per-CPU times (online CPUs).
	Times []CPUTime `json:"times,omitempty"`
	// IdleDriver and IdleGovernor are cpuidle's current ones.
	IdleDriver   string `json:"idle_driver,omitempty"`
	IdleGovernor string `json:"idle_governor,omitempty"`
}

// CPU is one logical CPU.
type CPU struct {
	ID      int  `json:"id"`
	Online  bool `json:"online"`
	Package *int `json:"package,omitempty"` // physical_package_id
	Die     *int `json:"die,omitempty"`
	Cluster *int `json:"cluster,omitempty"`
	Core    *int `json:"core,omitempty"` // core_id (unique within a package)
	// Siblings are the hardware threads of this CPU's core
	// (thread_siblings_list), itself included.
	Siblings *CPUSet `json:"siblings,omitempty"`
	Node     *int    `json:"node,omitempty"` // NUMA node, from the nodes' cpulists
	// LLC are the CPUs sharing this CPU's last-level cache (the highest
	// level of cache/index*/shared_cpu_list), itself included; nil when
	// the kernel does not describe its caches.
	LLC *CPUSet `json:"llc,omitempty"`
	// Governor is the cpufreq governor of the CPU's policy (copied from
	// Freq for convenience).
	Governor string `json:"governor,omitempty"`
	// Idle lists the cpuidle states of this CPU.
	Idle []IdleState `json:"idle,omitempty"`
}

// CPUTime is one CPU's time per state since boot, in clock ticks
// (USER_HZ).
type CPUTime struct {
	CPU     int    `json:"cpu"`
	User    uint64 `json:"user"`
	Nice    uint64 `json:"nice"`
	System  uint64 `json:"system"`
	Idle    uint64 `json:"idle"`
	IOWait  uint64 `json:"iowait"`
	IRQ     uint64 `json:"irq"`
	SoftIRQ uint64 `json:"softirq"`
	Steal   uint64 `json:"steal"`
}

// FreqPolicy is one cpufreq policy (/sys/devices/system/cpu/cpufreq/policyN).
type FreqPolicy struct {
	Name        string   `json:"name"` // "policy0"
	CPUs        CPUSet   `json:"cpus"` // affected_cpus
	Driver      string   `json:"driver,omitempty"`
	Governor    string   `json:"governor,omitempty"`
	Governors   []string `json:"available_governors,omitempty"`
	CurKHz      *int64   `json:"cur_khz,omitempty"`
	MinKHz      *int64   `json:"min_khz,omitempty"` // scaling_min_freq
	MaxKHz      *int64   `json:"max_khz,omitempty"` // scaling_max_freq
	HWMinKHz    *int64   `json:"hw_min_khz,omitempty"`
	HWMaxKHz    *int64   `json:"hw_max_khz,omitempty"`
	EnergyPerfP string   `json:"energy_performance_preference,omitempty"`
}

// IdleState is one cpuidle state of one CPU.
type IdleState struct {
	Index      int    `json:"index"` // K of stateK
	Name       string `json:"name"`
	LatencyUs  *int64 `json:"latency_us,omitempty"`   // exit latency
	ResidentUs *int64 `json:"residency_us,omitempty"` // target residency
	Disabled   bool   `json:"disabled,omitempty"`
}

// NUMA is the memory topology.
type NUMA struct {
	Online *CPUSet `json:"online,omitempty"` // /sys/devices/system/node/online (a node list)
	Nodes  []Node  `json:"nodes,omitempty"`
}

// Node is one NUMA node.
type Node struct {
	ID   int    `json:"id"`
	CPUs CPUSet `json:"cpus"`
	// MemTotal and MemFree are in bytes.
	MemTotal *uint64 `json:"mem_total,omitempty"`
	MemFree  *uint64 `json:"mem_free,omitempty"`
	// Distances are the SLIT distances to nodes 0..n-1 (node/distance).
	Distances []int `json:"distances,omitempty"`
}

// Clocksource is the kernel's time source.
type Clocksource struct {
	Current   string   `json:"current"`
	Available []string `json:"available,omitempty"`
}

// Interrupts is /proc/interrupts plus each IRQ's /proc/irq/N settings.
type Interrupts struct {
	// CPUs maps each count column to its CPU number (the header's CPUn).
	CPUs []int `json:"cpus"`
	IRQs []IRQ `json:"irqs"`
	// Counters are the named rows (NMI, LOC, RES ...).
	Counters []InterruptCounter `json:"counters,omitempty"`
	// DefaultAffinity is /proc/irq/default_smp_affinity.
	DefaultAffinity *CPUSet `json:"default_affinity,omitempty"`
}

// IRQ is one numbered interrupt.
type IRQ struct {
	Number  int      `json:"irq"`
	Counts  []uint64 `json:"counts"` // per column of Interrupts.CPUs
	Total   uint64   `json:"total"`
	Chip    string   `json:"chip,omitempty"`    // "PCI-MSIX-0000:00:03.0", "IR-PCI-MSI", "ITS-MSI", "GICv3"
	HWIRQ   string   `json:"hwirq,omitempty"`   // "1", "524288"
	Trigger string   `json:"trigger,omitempty"` // "edge", "level"
	// Name is the action column ("virtio2-input.0",
	// "mlx5_comp3@pci:0000:3b:00.0"); shared IRQs list several names,
	// separated by ", ".
	Name string `json:"name,omitempty"`
	// Affinity is smp_affinity_list, Effective effective_affinity_list
	// (where the kernel actually delivers), Node the IRQ's NUMA node (-1
	// when unknown). Nil when the file is absent.
	Affinity  *CPUSet `json:"affinity,omitempty"`
	Effective *CPUSet `json:"effective,omitempty"`
	Node      *int    `json:"node,omitempty"`
	// Hint is affinity_hint: the CPUs the driver meant the IRQ for
	// (irq_set_affinity_hint, one per queue vector in most drivers). Read
	// for NICs' IRQs only; nil when absent or empty (no hint set).
	Hint *CPUSet `json:"affinity_hint,omitempty"`
}

// InterruptCounter is a named row of /proc/interrupts.
type InterruptCounter struct {
	Name        string   `json:"name"` // "LOC"
	Counts      []uint64 `json:"counts"`
	Description string   `json:"description,omitempty"` // "Local timer interrupts"
}

// NIC is one network interface from /sys/class/net.
type NIC struct {
	Name    string `json:"name"`
	Virtual bool   `json:"virtual"` // under /sys/devices/virtual (lo, veth, bridges, ifb)
	// Inferred says where a NIC not read from /sys/class/net came from: a
	// tree holding /proc/interrupts but no /sys/class/net names its NICs in
	// the IRQ names (net_irqinfer.go). Such a NIC's Name is the interface
	// the names carry, else its PCI function or virtio/xen device; its
	// queues (RxQueues, TxQueues nil) and NUMA node are unknown.
	Inferred string `json:"inferred,omitempty"`
	Driver   string `json:"driver,omitempty"`
	// Device is the resolved sysfs path of the NIC's device
	// ("/sys/devices/pci0000:00/0000:00:03.0/virtio2").
	Device string `json:"device,omitempty"`
	// PCIAddress is the nearest PCI function at or above Device.
	PCIAddress string `json:"pci_address,omitempty"`
	// NUMANode is the first numa_node found walking up from Device. -1
	// means the firmware did not say, and is kept distinct from node 0;
	// nil means no device has the file (a virtual NIC).
	NUMANode *int `json:"numa_node,omitempty"`
	// NUMANodeFrom is the host path NUMANode was read from.
	NUMANodeFrom string  `json:"numa_node_from,omitempty"`
	LocalCPUs    *CPUSet `json:"local_cpus,omitempty"` // local_cpulist, found the same way

	OperState string `json:"operstate,omitempty"`
	Address   string `json:"address,omitempty"` // MAC
	// Addresses are the IP addresses with prefix length ("10.0.0.7/24"),
	// from netlink on a live machine.
	Addresses []string `json:"addresses,omitempty"`
	// Lower names the devices under this one: a bond's slaves, a VLAN's
	// parent, a bridge's ports (the lower_* links).
	Lower      []string `json:"lower,omitempty"`
	MTU        *int     `json:"mtu,omitempty"`
	SpeedMbps  *int     `json:"speed_mbps,omitempty"` // nil when unknown (-1, or a down link)
	Duplex     string   `json:"duplex,omitempty"`
	TxQueueLen *int     `json:"tx_queue_len,omitempty"`

	RxQueues []RxQueue `json:"rx_queues"`
	TxQueues []TxQueue `json:"tx_queues"`

	// MSIIRQs are the IRQs of the PCI device (msi_irqs).
	MSIIRQs []int `json:"msi_irqs,omitempty"`
	// QueueIRQs maps IRQs to queues (net_irqmatch.go: by name, or by
	// vector order), each saying how.
	QueueIRQs []QueueIRQ `json:"queue_irqs,omitempty"`
	// OtherIRQs are the device's IRQs known not to serve a queue
	// (virtio config, mlx5 async, ENA management).
	OtherIRQs []NICIRQ `json:"other_irqs,omitempty"`
	// UnmappedIRQs are the device's IRQs (or IRQs named after the NIC)
	// that nothing mapped, each saying why; they are reported, not guessed.
	UnmappedIRQs []NICIRQ `json:"unmapped_irqs,omitempty"`
	// UnmappedQueues are queues ("rx-3", "tx-3") of a NIC with IRQs that
	// no IRQ was mapped to.
	UnmappedQueues []string `json:"unmapped_queues,omitempty"`

	// Ethtool holds what the ethtool ioctls report; nil on fixture trees
	// that did not capture it, and for NICs that support none of them.
	Ethtool *Ethtool `json:"ethtool,omitempty"`
}

// RxQueue is /sys/class/net/IF/queues/rx-N.
type RxQueue struct {
	Index   int     `json:"index"`
	RPSCPUs *CPUSet `json:"rps_cpus,omitempty"`
	// RPSFlowCnt is rps_flow_cnt (RFS table entries for this queue).
	RPSFlowCnt *int `json:"rps_flow_cnt,omitempty"`
	// RPSUnsupported is true when rps_cpus is listed but cannot be read:
	// RPS does not apply here.
	RPSUnsupported bool  `json:"rps_unsupported,omitempty"`
	IRQs           []int `json:"irqs,omitempty"` // from QueueIRQs
}

// TxQueue is /sys/class/net/IF/queues/tx-N.
type TxQueue struct {
	Index   int     `json:"index"`
	XPSCPUs *CPUSet `json:"xps_cpus,omitempty"`
	// XPSUnsupported is true when xps_cpus is listed but cannot be read
	// (a single-queue virtio NIC): XPS does not apply here.
	XPSUnsupported bool  `json:"xps_unsupported,omitempty"`
	IRQs           []int `json:"irqs,omitempty"`
}

// QueueKind says which queues an IRQ serves.
type QueueKind string

// Queue kinds.
const (
	QueueRx       QueueKind = "rx"
	QueueTx       QueueKind = "tx"
	QueueCombined QueueKind = "combined" // rx-N and tx-N
)

// QueueIRQ is one IRQ mapped to a queue.
type QueueIRQ struct {
	IRQ   int       `json:"irq"`
	Name  string    `json:"name"`
	Queue int       `json:"queue"`
	Kind  QueueKind `json:"kind"`
	// Rule names the convention that matched ("mlx5", "virtio",
	// "user:REGEXP:VAR_ETH_qpVAR_QUEUE", "order").
	Rule string `json:"rule"`
	// How says what evidence matched it: "name i40e {DRIVER}-{IF}-TxRx-N;
	// the NIC's by msi_irqs", "vector order: ...".
	How string `json:"how"`
	// NoQueue is true when the queue it names does not exist (mlx5 keeps
	// a completion vector per CPU even with fewer channels).
	NoQueue bool `json:"no_queue,omitempty"`
	// AlsoTx are tx queues the IRQ serves besides its own queue (qlcnic's
	// IF-tx-0-rx-N serves rx-N and tx-0).
	AlsoTx []int `json:"also_tx,omitempty"`
}

// NICIRQ is an IRQ of a NIC that serves no queue, or could not be mapped.
type NICIRQ struct {
	IRQ  int    `json:"irq"`
	Name string `json:"name"`
	// Why says what it serves instead of a queue, or why it stayed
	// unmapped.
	Why string `json:"why,omitempty"`
}

// Ethtool is what the ethtool ioctls report for a NIC; Channels is
// `ethtool -l`, Ring `ethtool -g`, Coalesce the part of `ethtool -c` the
// doctor reads. They are defined where they are asked (package kernel), as the
// JSON a capture keeps in ethtool/IF.json.
type (
	Ethtool  = kernel.Ethtool
	Channels = kernel.Channels
	Ring     = kernel.Ring
	Coalesce = kernel.Coalesce
)

// Irqbalance is the irqbalance daemon's state and configuration.
type Irqbalance struct {
	Running bool  `json:"running"`
	PIDs    []int `json:"pids,omitempty"`
	// ProcessesSeen counts the processes under /proc that the scan for
	// irqbalance read: 0 means the snapshot has no process list (a
	// partial capture), and Running false then proves nothing.
	ProcessesSeen int `json:"processes_seen,omitempty"`
	// EnabledAtBoot is true when systemd's multi-user target wants
	// irqbalance.service.
	EnabledAtBoot bool `json:"enabled_at_boot,omitempty"`
	// ConfigPath is the environment file found (/etc/default/irqbalance
	// on Debian, /etc/sysconfig/irqbalance on Red Hat).
	ConfigPath string `json:"config_path,omitempty"`
	// Config holds its assignments, unquoted.
	Config map[string]string `json:"config,omitempty"`
	// BannedCPUs comes from IRQBALANCE_BANNED_CPULIST, or the deprecated
	// hex IRQBALANCE_BANNED_CPUS.
	BannedCPUs *CPUSet `json:"banned_cpus,omitempty"`
	// Args is OPTIONS (Red Hat) or IRQBALANCE_ARGS (Debian).
	Args string `json:"args,omitempty"`
	// BannedIRQs are the --banirq arguments.
	BannedIRQs []int `json:"banned_irqs,omitempty"`
}

// Sysctls maps dotted sysctl names to values.
type Sysctls map[string]string

// THP is transparent huge pages' policy.
type THP struct {
	Enabled string `json:"enabled,omitempty"` // the bracketed choice: "always", "madvise", "never"
	Defrag  string `json:"defrag,omitempty"`
	// EnabledRaw and DefragRaw are the files as read ("always [madvise] never").
	EnabledRaw string `json:"enabled_raw,omitempty"`
	DefragRaw  string `json:"defrag_raw,omitempty"`
}

// Meminfo is the part of /proc/meminfo the doctor reads, in bytes.
type Meminfo struct {
	MemTotal       *uint64 `json:"mem_total,omitempty"`
	MemFree        *uint64 `json:"mem_free,omitempty"`
	MemAvailable   *uint64 `json:"mem_available,omitempty"`
	Cached         *uint64 `json:"cached,omitempty"`
	SwapTotal      *uint64 `json:"swap_total,omitempty"`
	SwapFree       *uint64 `json:"swap_free,omitempty"`
	AnonHugePages  *uint64 `json:"anon_huge_pages,omitempty"`
	CommitLimit    *uint64 `json:"commit_limit,omitempty"`
	CommittedAS    *uint64 `json:"committed_as,omitempty"`
	HugePagesTotal *uint64 `json:"huge_pages_total,omitempty"` // a count, not bytes
	HugePagesFree  *uint64 `json:"huge_pages_free,omitempty"`  // a count
	Hugepagesize   *uint64 `json:"hugepagesize,omitempty"`
}

// VMStat holds the /proc/vmstat counters the doctor reads.
type VMStat struct {
	NUMAHintFaults      *uint64 `json:"numa_hint_faults,omitempty"`
	NUMAHintFaultsLocal *uint64 `json:"numa_hint_faults_local,omitempty"`
	NUMAPagesMigrated   *uint64 `json:"numa_pages_migrated,omitempty"`
	NUMAPTEUpdates      *uint64 `json:"numa_pte_updates,omitempty"`
	PswpIn              *uint64 `json:"pswpin,omitempty"`
	PswpOut             *uint64 `json:"pswpout,omitempty"`
	PgMajFault          *uint64 `json:"pgmajfault,omitempty"`
	THPFaultAlloc       *uint64 `json:"thp_fault_alloc,omitempty"`
	CompactStall        *uint64 `json:"compact_stall,omitempty"`
}

// Softnet is one row of /proc/net/softnet_stat (one CPU's backlog).
type Softnet struct {
	CPU         int    `json:"cpu"`
	Processed   uint64 `json:"processed"`
	Dropped     uint64 `json:"dropped"`
	TimeSqueeze uint64 `json:"time_squeeze"`
	ReceivedRPS uint64 `json:"received_rps"`
	FlowLimit   uint64 `json:"flow_limit_count"`
	// BacklogLen is absent on kernels before 5.10.
	BacklogLen *uint64 `json:"backlog_len,omitempty"`
}

// Softirqs is /proc/softirqs.
type Softirqs struct {
	CPUs   []int               `json:"cpus"`   // column -> CPU
	Counts map[string][]uint64 `json:"counts"` // "NET_RX" -> per column
}

// NetStats are the network namespace's counters.
type NetStats struct {
	// TcpExt is /proc/net/netstat's TcpExt section (ListenOverflows,
	// ListenDrops, TCPTimeWaitOverflow ...).
	TcpExt map[string]uint64 `json:"tcp_ext,omitempty"`
	// Sockstat is /proc/net/sockstat and sockstat6: protocol -> field ->
	// value ("TCP" -> "orphan" -> 0, "sockets" -> "used" -> 120).
	Sockstat map[string]map[string]int64 `json:"sockstat,omitempty"`
	// TCP counts the TCP sockets of /proc/net/tcp and tcp6 by state.
	TCP *TCPSummary `json:"tcp,omitempty"`
}

// TCPSummary counts TCP sockets.
type TCPSummary struct {
	// Scope says which sockets ByState counts: "ports" for the
	// inspector's namespace (the listeners and the sockets of Ports,
	// filtered in the kernel: a busy host's other sockets cost nothing),
	// and for another namespace read through sock_diag; "" for every
	// socket (another namespace's /proc/PID/net/tcp, the fallback).
	// /proc/net/sockstat has the namespace's totals.
	Scope   string         `json:"scope,omitempty"`
	ByState map[string]int `json:"by_state"` // "ESTABLISHED" -> n
	// Source says where another namespace's sockets came from:
	// "sock_diag" (dumped inside the namespace), or its /proc/PID/net
	// tables and why sock_diag was not used ("... operation not
	// permitted (needs root)"). Empty for the inspector's namespace.
	Source string `json:"source,omitempty"`
	// Ports counts sockets to and from the ports of interest (Redis's
	// listening ports and Options.Ports).
	Ports []PortSockets `json:"ports,omitempty"`
}

// PortSockets counts the sockets of one TCP port.
type PortSockets struct {
	Port int `json:"port"`
	// To counts sockets whose remote port is Port (this host as a
	// client: what uses up ip_local_port_range).
	ToEstablished int `json:"to_established"`
	ToTimeWait    int `json:"to_time_wait"`
	// ToTimeWaitLoopback counts those of ToTimeWait on loopback, where
	// tcp_tw_reuse 2 (the default) reuses them.
	ToTimeWaitLoopback int `json:"to_time_wait_loopback,omitempty"`
	// From counts sockets whose local port is Port (this host as the
	// server), listeners excluded.
	FromEstablished int `json:"from_established"`
	FromTimeWait    int `json:"from_time_wait"`
}

// Process is one Redis server process.
type Process struct {
	PID     int      `json:"pid"`
	Comm    string   `json:"comm"`
	Cmdline []string `json:"cmdline,omitempty"`
	// Refused lists this process's files the kernel refused to read
	// (permission): a thread's status among them leaves its CPU affinity
	// unknown, not "any CPU".
	Refused []string `json:"refused,omitempty"`

	Threads []Thread `json:"threads"`

	CPUsAllowed *CPUSet `json:"cpus_allowed,omitempty"` // Cpus_allowed_list
	MemsAllowed *CPUSet `json:"mems_allowed,omitempty"` // Mems_allowed_list (nodes)
	VmRSS       *uint64 `json:"vm_rss,omitempty"`       // bytes
	VmSwap      *uint64 `json:"vm_swap,omitempty"`      // bytes
	// AnonHugePages is from smaps_rollup, in bytes.
	AnonHugePages *uint64 `json:"anon_huge_pages,omitempty"`
	// NUMAPages counts the process's resident pages per NUMA node
	// (numa_maps' N<node>= fields), NUMABytes weighs them by page size.
	NUMAPages map[int]uint64 `json:"numa_pages,omitempty"`
	NUMABytes map[int]uint64 `json:"numa_bytes,omitempty"`
	// OpenFiles is "Max open files" from limits.
	OpenFiles *RLimit `json:"open_files,omitempty"`

	// NetNS is the network namespace's inode (absent when ns/net could not
	// be read: unknown); NetNSIsInspector is true when it is the
	// inspector's own (so Snapshot.Sysctls apply).
	NetNS            uint64 `json:"netns,omitempty"`
	NetNSIsInspector bool   `json:"netns_is_inspector"`
	// NetNSName is the namespace's name under /run/netns, when it is
	// another one and has a name there (ip netns add).
	NetNSName string `json:"netns_name,omitempty"`
	// NetSysctls are the net.* sysctls read inside the process's network
	// namespace, when it differs from the inspector's.
	NetSysctls Sysctls `json:"net_sysctls,omitempty"`
	// Net is the namespace's counters, when it differs.
	Net *NetStats `json:"net,omitempty"`

	// Listen are the TCP sockets it listens on.
	Listen []ListenSocket `json:"listen,omitempty"`
	// ListenNICs names the NICs of its specific listening addresses
	// (none for 0.0.0.0 and ::).
	ListenNICs []string `json:"listen_nics,omitempty"`
	// Traffic counts its established connections by the NIC holding their
	// local address, busiest first: the NICs its clients come through.
	// Only for a process in the inspector's network namespace.
	Traffic []NICTraffic `json:"traffic,omitempty"`

	Cgroup *Cgroup `json:"cgroup,omitempty"`
}

// Thread is one thread of a process.
type Thread struct {
	TID  int    `json:"tid"`
	Comm string `json:"comm"`
	// Role is "main" (tid == pid), "io" (io_thd_N), "bio" (bio_*),
	// "jemalloc" (jemalloc_bg_thd) or "other".
	Role  string `json:"role"`
	State string `json:"state,omitempty"`
	// CPU is the CPU the thread last ran on (stat field 39) and Node its
	// NUMA node.
	CPU  *int `json:"cpu,omitempty"`
	Node *int `json:"node,omitempty"`
	// UTime and STime are in clock ticks (USER_HZ).
	UTime uint64 `json:"utime"`
	STime uint64 `json:"stime"`
	// CPUsAllowed is the thread's own affinity, when it differs from the
	// process's (Redis's server_cpulist, bio_cpulist ...).
	CPUsAllowed *CPUSet `json:"cpus_allowed,omitempty"`
}

// NICTraffic counts a process's connections through one NIC ("unknown"
// when no NIC holds the local address).
type NICTraffic struct {
	NIC         string `json:"nic"`
	Connections int    `json:"connections"`
}

// RLimit is a resource limit; -1 means unlimited.
type RLimit struct {
	Soft int64 `json:"soft"`
	Hard int64 `json:"hard"`
}

// ListenSocket is a listening TCP socket.
type ListenSocket struct {
	Family string `json:"family"` // "tcp" or "tcp6"
	Addr   string `json:"addr"`   // "0.0.0.0", "::", "127.0.0.1"
	Port   int    `json:"port"`
	Inode  uint64 `json:"inode"`
}

// Cgroup is the cgroup limits of a process.
type Cgroup struct {
	Version int    `json:"version"` // 1 or 2 (of the cpuset/cpu controllers)
	Path    string `json:"path"`    // the process's cgroup (of the cpu controller on v1)
	// CPUs is cpuset.cpus.effective (v2) or cpuset.cpus (v1): the CPUs
	// actually granted.
	CPUs *CPUSet `json:"cpus,omitempty"`
	Mems *CPUSet `json:"mems,omitempty"` // nodes
	// CPUQuotaUs and CPUPeriodUs are cpu.max (v2) or cfs_quota_us and
	// cfs_period_us (v1); a nil quota means no limit.
	CPUQuotaUs  *int64 `json:"cpu_quota_us,omitempty"`
	CPUPeriodUs *int64 `json:"cpu_period_us,omitempty"`
	// NrPeriods, NrThrottled and ThrottledUs are cpu.stat's.
	NrPeriods   *uint64 `json:"nr_periods,omitempty"`
	NrThrottled *uint64 `json:"nr_throttled,omitempty"`
	ThrottledUs *uint64 `json:"throttled_us,omitempty"`
	// MemoryMax is memory.max (v2) or memory.limit_in_bytes (v1) in
	// bytes; nil means no limit.
	MemoryMax *uint64 `json:"memory_max,omitempty"`
}

// UnseenProcess is a process the scan found but could not describe.
type UnseenProcess struct {
	PID  int    `json:"pid"`
	Comm string `json:"comm"`
	// Why is what refused it ("/proc/4242/task: permission denied").
	Why string `json:"why"`
}
