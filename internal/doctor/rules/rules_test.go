package rules

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"redline/internal/doctor"
	"redline/internal/host"
	"redline/internal/redisadmin"
)

func setInfo(f *doctor.Facts, kv ...string) {
	text := f.Redis.Info.String()
	for i := 0; i+1 < len(kv); i += 2 {
		text += kv[i] + ":" + kv[i+1] + "\n"
	}
	f.Redis.Info = redisadmin.ParseInfo(text)
}

func proc(f *doctor.Facts) *host.Process { return &f.Host.Processes[0] }
func nic(f *doctor.Facts) *host.NIC      { return &f.Host.NICs[0] }

// fires holds, for every rule, a change to the healthy facts that makes it
// fire: the write-ups' problems among them.
var fires = map[string]func(f *doctor.Facts){
	"overcommit-memory": func(f *doctor.Facts) { f.Host.Sysctls["vm.overcommit_memory"] = "0" },
	"thp-enabled": func(f *doctor.Facts) {
		f.Host.THP.Enabled, f.Host.THP.EnabledRaw = "always", "[always] madvise never"
	},
	// W: somaxconn 128 below tcp-backlog 511 at 5000 clients.
	"somaxconn": func(f *doctor.Facts) { f.Host.Sysctls["net.core.somaxconn"] = "128"; f.ExpectedClients = 5000 },
	"nofile-maxclients": func(f *doctor.Facts) {
		f.Redis.Config["maxclients"] = "224"
		proc(f).OpenFiles = &host.RLimit{Soft: 256, Hard: 256}
	},
	"startup-warnings": func(f *doctor.Facts) {
		f.Redis.LogWarnings = []string{"WARNING: The TCP backlog setting of 511 cannot be enforced because /proc/sys/net/core/somaxconn is set to the lower value of 128."}
	},
	"arm64-cow-bug-ignored": func(f *doctor.Facts) { f.Redis.Config["ignore-warnings"] = "ARM64-COW-BUG" },
	"latency-monitor-off":   func(f *doctor.Facts) { f.Redis.Config["latency-monitor-threshold"] = "0" },
	"latency-events": func(f *doctor.Facts) {
		f.Redis.Latency = []redisadmin.LatencyEvent{{Event: "fork", Time: time.Unix(1700000000, 0), Latest: 120 * time.Millisecond, Max: 300 * time.Millisecond}}
	},
	"slowlog-off": func(f *doctor.Facts) { f.Redis.Config["slowlog-log-slower-than"] = "-1" },
	"expire-cycle-hz": func(f *doctor.Facts) {
		f.Redis.Latency = []redisadmin.LatencyEvent{{Event: "expire-cycle", Max: 40 * time.Millisecond}}
	},
	"appendfsync-always":  func(f *doctor.Facts) { f.Redis.Config["appendonly"], f.Redis.Config["appendfsync"] = "yes", "always" },
	"persistence-failing": func(f *doctor.Facts) { setInfo(f, "rdb_last_bgsave_status", "err") },
	"rejected-connections": func(f *doctor.Facts) {
		setInfo(f, "rejected_connections", "17", "connected_clients", "9990")
	},
	"tcp-backlog-low": func(f *doctor.Facts) { f.ExpectedClients = 5000 },
	// W: io-threads larger than the CPUs the process may use.
	"io-threads-oversized": func(f *doctor.Facts) { f.Redis.Config["io-threads"] = "8" },
	// W: io-threads unset on a big machine whose main thread is busy.
	"io-threads-unset": func(f *doctor.Facts) {
		f.Redis.Config["io-threads"] = "1"
		proc(f).CPUsAllowed = set(host.CPURange(0, 7))
	},
	"single-core-pin": func(f *doctor.Facts) { proc(f).CPUsAllowed = set(host.NewCPUSet(5)) },
	"maxmemory":       func(f *doctor.Facts) { f.Redis.Config["maxmemory"] = "0" },
	"fork-headroom": func(f *doctor.Facts) {
		proc(f).Cgroup.MemoryMax = u(6 << 30)
	},
	"fork-rate":       func(f *doctor.Facts) { setInfo(f, "latest_fork_usec", "800000") },
	"disable-thp-off": func(f *doctor.Facts) { f.Redis.Config["disable-thp"] = "no"; f.Host.THP.Enabled = "always" },
	"thp-in-redis":    func(f *doctor.Facts) { proc(f).AnonHugePages = u(64 << 20) },
	"output-buffer-disconnects": func(f *doctor.Facts) {
		setInfo(f, "client_output_buffer_limit_disconnections", "3")
	},
	"connection-churn": func(f *doctor.Facts) { setInfo(f, "total_connections_received", "90000000") },
	"unix-socket": func(f *doctor.Facts) {
		f.Redis.Addr = "127.0.0.1:6379"
		proc(f).Traffic = []host.NICTraffic{{NIC: "lo", Connections: 3}}
	},
	// W: ip_local_port_range "10000 20000" -> Cannot assign requested address.
	"port-range":     func(f *doctor.Facts) { f.Host.Sysctls["net.ipv4.ip_local_port_range"] = "10000 20000" },
	"reserved-ports": func(f *doctor.Facts) { f.Host.Sysctls["net.ipv4.ip_local_port_range"] = "1025 65530" },
	"tw-reuse":       func(f *doctor.Facts) { f.Host.Sysctls["net.ipv4.tcp_tw_reuse"] = "0" },
	"syn-backlog":    func(f *doctor.Facts) { f.Host.Sysctls["net.ipv4.tcp_max_syn_backlog"] = "128" },
	"listen-overflow": func(f *doctor.Facts) {
		f.Host.Net.TcpExt["ListenOverflows"], f.Host.Net.TcpExt["ListenDrops"] = 4242, 4242
	},
	// W: tcp_max_tw_buckets lowered.
	"tw-buckets-lowered": func(f *doctor.Facts) { f.Host.Sysctls["net.ipv4.tcp_max_tw_buckets"] = "10000" },
	"tcp-rmem-default":   func(f *doctor.Facts) { f.Host.Sysctls["net.ipv4.tcp_rmem"] = "4096 87380 16777216" },
	"fin-timeout":        func(f *doctor.Facts) { f.Host.Sysctls["net.ipv4.tcp_fin_timeout"] = "15" },
	"tw-recycle":         func(f *doctor.Facts) { f.Host.Sysctls["net.ipv4.tcp_tw_recycle"] = "1" },
	"syncookies-off":     func(f *doctor.Facts) { f.Host.Sysctls["net.ipv4.tcp_syncookies"] = "0" },
	// W: NIC on node 1, its queue IRQs spread over all nodes.
	"nic-irq-affinity": spreadIRQs,
	// W: redis-server's threads on a node other than the NIC's.
	"nic-numa-locality": func(f *doctor.Facts) {
		p := proc(f)
		p.CPUsAllowed = set(host.CPURange(0, 3))
		p.Threads[0].CPU, p.Threads[0].Node = ip(1), ip(0)
	},
	"irq-redis-overlap": func(f *doctor.Facts) { proc(f).Threads[0].CPUsAllowed = set(host.CPURange(5, 6)) },
	// W: irqbalance running while IRQs need pinning.
	"irqbalance-pinning": func(f *doctor.Facts) {
		spreadIRQs(f)
		f.Host.Irqbalance = host.Irqbalance{Running: true, PIDs: []int{812}, ProcessesSeen: 180}
	},
	// W: queue count not matching the cores.
	"nic-queue-count": func(f *doctor.Facts) { nic(f).Ethtool.Channels = &host.Channels{MaxCombined: 63, Combined: 63} },
	// W: no RPS on a single-queue NIC with one CPU saturated in softirq.
	"rps": func(f *doctor.Facts) {
		n := nic(f)
		n.RxQueues, n.QueueIRQs = n.RxQueues[:1], n.QueueIRQs[:1]
		f.Host.Softirqs.Counts["NET_RX"] = []uint64{0, 0, 0, 0, 99000, 10, 10, 10}
	},
	"rfs":             func(f *doctor.Facts) { nic(f).RxQueues[0].RPSCPUs = set(host.CPURange(4, 7)) },
	"xps":             func(f *doctor.Facts) { nic(f).TxQueues[1].XPSCPUs = set(host.NewCPUSet()) },
	"softnet-drops":   func(f *doctor.Facts) { f.Host.Softnet[4].Dropped = 77 },
	"softnet-squeeze": func(f *doctor.Facts) { f.Host.Softnet[5].TimeSqueeze = 900 },
	"nic-coalesce":    func(f *doctor.Facts) { nic(f).Ethtool.Coalesce.AdaptiveRx = false },
	"busy-poll": func(f *doctor.Facts) {
		f.Host.Sysctls["net.core.busy_read"], f.Host.Sysctls["net.core.busy_poll"] = "0", "0"
	},
	"numa-balancing": func(f *doctor.Facts) { f.Host.Sysctls["kernel.numa_balancing"] = "1" },
	"zone-reclaim":   func(f *doctor.Facts) { f.Host.Sysctls["vm.zone_reclaim_mode"] = "1" },
	"cpu-governor":   func(f *doctor.Facts) { f.Host.CPU.Freq[0].Governor = "powersave" },
	"deep-cstates": func(f *doctor.Facts) {
		f.Host.CPU.CPUs[5].Idle = append(f.Host.CPU.CPUs[5].Idle, host.IdleState{Index: 3, Name: "C6", LatencyUs: i64(133)})
	},
	"clocksource": func(f *doctor.Facts) { f.Host.Clocksource.Current = "xen" },
	"intrinsic-latency": func(f *doctor.Facts) {
		d := 9700 * time.Microsecond
		f.IntrinsicLatency = &d
	},
	"redis-numa-spread":   func(f *doctor.Facts) { proc(f).CPUsAllowed = set(host.CPURange(0, 7)) },
	"cgroup-cpu-throttle": func(f *doctor.Facts) { proc(f).Cgroup.NrThrottled = u(12) },
	"thp-defrag":          func(f *doctor.Facts) { f.Host.THP.Defrag = "always" },
	"redis-swapped":       func(f *doctor.Facts) { proc(f).VmSwap = u(200 << 20) },
	"swap-policy":         func(f *doctor.Facts) { f.Host.Memory.SwapTotal = u(0) },
	// Both queues' interrupts on CPU 4 of 8 (the 8 queues on CPU 0
	// of 48, small).
	"nic-irq-concentration": bothOnCPU4,
	// The split: a queue's interrupts 31% on node 0, 69% on node 1.
	"nic-irq-node-split": func(f *doctor.Facts) { f.Host.Interrupts.IRQs[0].Counts = []uint64{31000, 0, 0, 0, 69000, 0, 0, 0} },
	"nic-irq-sharing":    bothOnCPU4,
	// irqbalance moved IRQ 100 from CPU 6 to CPU 4 during the sample.
	"irq-affinity-moving": func(f *doctor.Facts) {
		withSample(f)
		f.Prev.Interrupts.IRQs[0].Affinity = set(host.NewCPUSet(6))
		f.Host.Irqbalance = host.Irqbalance{Running: true, PIDs: []int{812}, ProcessesSeen: 180}
	},
	"hugetlb-reserved": func(f *doctor.Facts) {
		f.Host.Memory.HugePagesTotal, f.Host.Memory.HugePagesFree = u(2048), u(2048)
	},
}

// healthyFor adjusts the healthy facts for rules that need more than one
// reading.
var healthyFor = map[string]func(f *doctor.Facts){"irq-affinity-moving": withSample}

// withSample adds an earlier reading 5 s before, with every interrupt
// count 1000 lower.
func withSample(f *doctor.Facts) {
	b, err := json.Marshal(f.Host)
	if err != nil {
		panic(err)
	}
	prev := new(host.Snapshot)
	if err := json.Unmarshal(b, prev); err != nil {
		panic(err)
	}
	for i := range prev.Interrupts.IRQs {
		for c, n := range prev.Interrupts.IRQs[i].Counts {
			prev.Interrupts.IRQs[i].Counts[c] = n - min(n, 1000)
		}
	}
	f.Prev, f.Interval = prev, 5*time.Second
}

// bothOnCPU4 delivers both of eth0's queues to CPU 4.
func bothOnCPU4(f *doctor.Facts) {
	f.Host.Interrupts.IRQs[1].Counts = []uint64{0, 0, 0, 0, 50000, 0, 0, 0}
}

// spreadIRQs puts eth0's queue IRQs on CPUs 0 and 4: both nodes.
func spreadIRQs(f *doctor.Facts) {
	for q := range 2 {
		f.Host.Interrupts.IRQs[q].Affinity = set(host.NewCPUSet(q * 4))
	}
}

func run(t *testing.T, f *doctor.Facts, id string) doctor.Finding {
	t.Helper()
	rep, err := doctor.Run(context.Background(), f, doctor.Options{Only: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 {
		t.Fatalf("%s: %d findings", id, len(rep.Findings))
	}
	return rep.Findings[0]
}

// Every registered rule passes on the healthy host and fires on the
// change listed for it in fires; a fired finding carries evidence.
func TestEveryRuleFiresAndPasses(t *testing.T) {
	rules := doctor.Rules()
	if len(rules) < 40 {
		t.Errorf("%d rules registered, want at least 40", len(rules))
	}
	for _, r := range rules {
		t.Run(r.ID, func(t *testing.T) {
			healthy := healthyFacts()
			if adjust := healthyFor[r.ID]; adjust != nil {
				adjust(healthy)
			}
			if fd := run(t, healthy, r.ID); fd.Status != doctor.OK {
				t.Errorf("healthy host: status %s (%s%s), want ok", fd.Status, fd.Message, fd.Reason)
			}
			mut, ok := fires[r.ID]
			if !ok {
				t.Fatalf("no case makes %s fire: add one to fires", r.ID)
			}
			f := healthyFacts()
			mut(f)
			fd := run(t, f, r.ID)
			if fd.Status != doctor.Fired {
				t.Fatalf("status %s (%s), want fired", fd.Status, fd.Reason)
			}
			if fd.Message == "" || len(fd.Evidence) == 0 {
				t.Errorf("fired without a message or evidence: %+v", fd)
			}
			for _, e := range fd.Evidence {
				if e.Source == "" {
					t.Errorf("evidence without a source: %+v", e)
				}
			}
			if fd.Fix != nil && len(fd.Fix.Undo) != len(fd.Fix.Changes) {
				t.Errorf("%d changes but %d undo changes", len(fd.Fix.Changes), len(fd.Fix.Undo))
			}
		})
	}
	registered := rulesByID()
	for id := range fires {
		if _, ok := registered[id]; !ok {
			t.Errorf("fires has a case for %s, which is not registered", id)
		}
	}
}

// Without a server, Redis rules say "not checked" rather than pass or fail.
func TestRedisRulesNotCheckedWithoutServer(t *testing.T) {
	f := healthyFacts()
	f.Redis, f.RedisNote = nil, "--root reads a fixture tree"
	rep, err := doctor.Run(context.Background(), f, doctor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	registered := rulesByID()
	for _, fd := range rep.Findings {
		r := registered[fd.ID]
		if r.Needs&doctor.NeedRedis != 0 && (fd.Status != doctor.NotChecked || !strings.Contains(fd.Reason, "fixture tree")) {
			t.Errorf("%s: status %s (%s), want not-checked naming the reason", fd.ID, fd.Status, fd.Reason)
		}
	}
}

// rulesByID is the registry by rule id.
func rulesByID() map[string]doctor.Rule {
	out := map[string]doctor.Rule{}
	for _, r := range doctor.Rules() {
		out[r.ID] = r
	}
	return out
}

// The two false alarms of issue 25: unix-socket on the doctor's own
// loopback connection, tw-reuse on loopback TIME_WAIT sockets that
// tcp_tw_reuse 2 reuses.
func TestNoFalseAlarmsOnLoopback(t *testing.T) {
	f := healthyFacts()
	f.Redis.Addr = "127.0.0.1:6379"
	proc(f).Traffic = []host.NICTraffic{{NIC: "lo", Connections: 1}}
	if fd := run(t, f, "unix-socket"); fd.Status != doctor.OK {
		t.Errorf("unix-socket with only the doctor's connection: %s %s", fd.Status, fd.Message)
	}
	proc(f).Traffic = []host.NICTraffic{{NIC: "lo", Connections: 2}}
	if fd := run(t, f, "unix-socket"); fd.Status != doctor.Fired {
		t.Errorf("unix-socket with another loopback client: %s %s", fd.Status, fd.Message)
	}

	for _, tc := range []struct {
		reuse        string
		tw, loopback int
		want         doctor.Status
	}{
		{"2", 5000, 5000, doctor.OK},
		{"2", 5000, 4500, doctor.OK},
		{"2", 5000, 0, doctor.Fired},
		{"1", 5000, 0, doctor.OK},
		{"0", 5000, 5000, doctor.Fired},
	} {
		f := healthyFacts()
		f.Host.Sysctls["net.ipv4.tcp_tw_reuse"] = tc.reuse
		f.Host.Net.TCP.Ports = []host.PortSockets{{Port: 6379, ToTimeWait: tc.tw, ToTimeWaitLoopback: tc.loopback}}
		if fd := run(t, f, "tw-reuse"); fd.Status != tc.want {
			t.Errorf("tcp_tw_reuse %s, %d TIME_WAIT (%d loopback): %s (%s), want %s", tc.reuse, tc.tw, tc.loopback, fd.Status, fd.Message, tc.want)
		}
	}
}
