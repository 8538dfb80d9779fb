package rules

import (
	"time"

	"redline/internal/doctor"
	"redline/internal/host"
	"redline/internal/redisadmin"
)

func ip(v int) *int                  { return &v }
func u(v uint64) *uint64             { return &v }
func i64(v int64) *int64             { return &v }
func set(s host.CPUSet) *host.CPUSet { return &s }

// healthyHost is a 2-node, 8-CPU host with eth0 on node 1 and a
// redis-server on node 1 (its main thread on CPUs 6-7, eth0's two queue
// IRQs on CPUs 4 and 5), tuned the way the rules want: every rule passes.
func healthyHost() *host.Snapshot {
	s := &host.Snapshot{Schema: host.SchemaVersion, Source: host.Source{Root: "/fixture"}}
	s.CPU.Online = set(host.CPURange(0, 7))
	for c := 0; c < 8; c++ {
		s.CPU.CPUs = append(s.CPU.CPUs, host.CPU{ID: c, Online: true, Package: ip(c / 4), Core: ip(c % 4), Node: ip(c / 4),
			Governor: "performance", Idle: []host.IdleState{{Index: 0, Name: "POLL", LatencyUs: i64(0)}, {Index: 1, Name: "C1", LatencyUs: i64(2)}}})
	}
	s.CPU.Freq = []host.FreqPolicy{{Name: "policy0", CPUs: host.CPURange(0, 7), Governor: "performance", Governors: []string{"performance", "powersave"}}}
	s.NUMA.Nodes = []host.Node{{ID: 0, CPUs: host.CPURange(0, 3)}, {ID: 1, CPUs: host.CPURange(4, 7)}}
	s.Clocksource = &host.Clocksource{Current: "tsc", Available: []string{"tsc", "hpet", "acpi_pm"}}
	s.Interrupts.CPUs = []int{0, 1, 2, 3, 4, 5, 6, 7}
	nic := host.NIC{Name: "eth0", Driver: "mlx5_core", NUMANode: ip(1), LocalCPUs: set(host.CPURange(4, 7)), OperState: "up",
		Ethtool: &host.Ethtool{Channels: &host.Channels{MaxCombined: 8, Combined: 2}, Coalesce: &host.Coalesce{AdaptiveRx: true}}}
	for q := 0; q < 2; q++ { // IRQs on CPUs 4-5, the server's main thread on 6
		irq := 100 + q
		counts := make([]uint64, 8)
		counts[4+q] = 50000
		s.Interrupts.IRQs = append(s.Interrupts.IRQs, host.IRQ{Number: irq, Name: "mlx5_comp" + string(rune('0'+q)), Affinity: set(host.NewCPUSet(4 + q)), Node: ip(1), Counts: counts, Total: 50000})
		nic.QueueIRQs = append(nic.QueueIRQs, host.QueueIRQ{IRQ: irq, Queue: q, Kind: host.QueueCombined, Rule: "mlx5"})
		nic.RxQueues = append(nic.RxQueues, host.RxQueue{Index: q, RPSCPUs: set(host.NewCPUSet()), RPSFlowCnt: ip(0), IRQs: []int{irq}})
		nic.TxQueues = append(nic.TxQueues, host.TxQueue{Index: q, XPSCPUs: set(host.NewCPUSet(4 + q)), IRQs: []int{irq}})
	}
	s.NICs = []host.NIC{nic, {Name: "lo", Virtual: true}}
	s.Sysctls = host.Sysctls{
		"vm.overcommit_memory": "1", "net.core.somaxconn": "4096", "net.ipv4.tcp_max_syn_backlog": "8192",
		"net.ipv4.ip_local_port_range": "32768 60999", "net.ipv4.ip_local_reserved_ports": "",
		"net.ipv4.tcp_tw_reuse": "2", "net.ipv4.tcp_max_tw_buckets": "262144", "net.ipv4.tcp_rmem": "4096 131072 6291456",
		"net.ipv4.tcp_fin_timeout": "60", "net.ipv4.tcp_tw_recycle": "0", "net.ipv4.tcp_syncookies": "1",
		"net.core.rps_sock_flow_entries": "0", "net.core.netdev_max_backlog": "1000", "net.core.netdev_budget": "300",
		"net.core.busy_read": "50", "net.core.busy_poll": "50", "kernel.numa_balancing": "0", "vm.zone_reclaim_mode": "0",
		"vm.swappiness": "10", "vm.nr_hugepages": "0",
	}
	s.THP = &host.THP{Enabled: "madvise", Defrag: "madvise", EnabledRaw: "always [madvise] never", DefragRaw: "always defer defer+madvise [madvise] never"}
	s.Memory = host.Meminfo{MemTotal: u(64 << 30), SwapTotal: u(8 << 30), HugePagesTotal: u(0), HugePagesFree: u(0), Hugepagesize: u(2 << 20)}
	s.VMStat = host.VMStat{NUMAPagesMigrated: u(0), PswpIn: u(0)}
	for c := 0; c < 8; c++ {
		s.Softnet = append(s.Softnet, host.Softnet{CPU: c, Processed: 1000})
	}
	s.Softirqs = &host.Softirqs{CPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}, Counts: map[string][]uint64{"NET_RX": {10, 10, 10, 10, 1000, 1000, 10, 10}}}
	s.Net = host.NetStats{TcpExt: map[string]uint64{"ListenOverflows": 0, "ListenDrops": 0, "TCPTimeWaitOverflow": 0},
		Sockstat: map[string]map[string]int64{"TCP": {"orphan": 0}},
		TCP:      &host.TCPSummary{ByState: map[string]int{}, Ports: []host.PortSockets{{Port: 6379, FromEstablished: 10}}}}
	s.Irqbalance.ProcessesSeen = 180
	s.Processes = []host.Process{{
		PID: 100, Comm: "redis-server", CPUsAllowed: set(host.CPURange(4, 7)), MemsAllowed: set(host.NewCPUSet(1)),
		VmSwap: u(0), AnonHugePages: u(0), NUMABytes: map[int]uint64{1: 1 << 30},
		OpenFiles: &host.RLimit{Soft: 65536, Hard: 65536}, NetNSIsInspector: true,
		Threads: []host.Thread{{TID: 100, Comm: "redis-server", Role: "main", CPU: ip(6), Node: ip(1), CPUsAllowed: set(host.CPURange(6, 7))}, {TID: 101, Comm: "bio_close_file", Role: "bio", CPU: ip(4), Node: ip(1)}},
		Cgroup:  &host.Cgroup{Version: 2, Path: "/system.slice/redis.service", CPUQuotaUs: i64(400000), CPUPeriodUs: i64(100000), NrThrottled: u(0), MemoryMax: u(32 << 30)},
	}}
	return s
}

const healthyInfo = `# Server
redis_version:7.2.4
process_id:100
tcp_port:6379
uptime_in_seconds:86400
# Clients
connected_clients:50
# Memory
used_memory:4294967296
used_memory_rss:4500000000
# Persistence
rdb_last_bgsave_status:ok
aof_last_bgrewrite_status:ok
aof_last_write_status:ok
rdb_last_cow_size:1048576
# Stats
total_connections_received:5000
rejected_connections:0
latest_fork_usec:40000
client_output_buffer_limit_disconnections:0
# CPU
used_cpu_sys_main_thread:8640.0
used_cpu_user_main_thread:8640.0
`

func healthyRedis() *redisadmin.Facts {
	return &redisadmin.Facts{
		Addr: "10.0.0.1:6379", Version: "7.2.4", Info: redisadmin.ParseInfo(healthyInfo),
		Config: redisadmin.Config{
			"maxclients": "10000", "tcp-backlog": "511", "latency-monitor-threshold": "10", "slowlog-log-slower-than": "10000",
			"slowlog-max-len": "128", "hz": "10", "appendonly": "no", "appendfsync": "everysec", "save": "3600 1",
			"io-threads": "3", "maxmemory": "8589934592", "disable-thp": "yes", "ignore-warnings": "", "unixsocket": "",
			"client-output-buffer-limit": "normal 0 0 0", "logfile": "/var/log/redis/redis-server.log", "cluster-port": "0",
		},
		Process:  redisadmin.Process{Pid: 100, Local: true},
		Errors:   map[string]string{},
		ConfFile: &redisadmin.ConfFile{Path: "/etc/redis/redis.conf", Directives: map[string]string{"maxclients": "10000"}},
	}
}

func healthyFacts() *doctor.Facts {
	d := 100 * time.Microsecond
	return &doctor.Facts{Host: healthyHost(), Redis: healthyRedis(), IntrinsicLatency: &d}
}
