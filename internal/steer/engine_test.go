package steer

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"redline/internal/host"
)

// The cases in testdata/steer/cases are recorded event streams with the
// moves they must produce. Each line is one of:
//
//	options periods=N majority=F min=N   engine options
//	cpus node=N LIST                      online CPUs of a node
//	core LIST                             CPUs sharing one physical core
//	host NAME [domain=llc]                the CPUs of testdata/steer/hosts/NAME, by node or LLC
//	irq N DEV QUEUE affinity=LIST         a queue IRQ and where it starts
//	redis LIST                            CPUs of Redis's main/io threads
//	busy CPU=F ...                        busy fractions
//	dryrun                                moves are not applied
//	flow dev=D mapping=M softirq=C cpu=C pid=P n=N   N packets: GRO on softirq, copy on cpu
//	gro cpu=C dev=D mapping=M skb=ADDR    one napi_gro_receive_entry event
//	copy cpu=C pid=P skb=ADDR             one skb_copy_datagram_iovec event
//	target PID,...                        count only copies by these processes
//	set N affinity=LIST                   someone else writes an IRQ's affinity
//	period                                cut the period and run the engine
//	expect move IRQ -> CPU                the period's moves, exactly
//	expect drift IRQ                      the period's new drifts, exactly
//	expect count DEV:Q matched=N received=N [cpu=C:N]   one queue's counts
//	expect count unmatched=N filtered=N   the period's unmatched and filtered copies
//
// A period with no expect lines must produce no moves and no drifts.

type simCase struct {
	opts    Options
	topo    Topology
	irqs    []QueueIRQ
	redis   host.CPUSet
	busy    map[int]float64
	dryrun  bool
	joiner  *Joiner
	engine  *Engine
	skb     uint64
	decGro  *Decoder
	period  int
	pending *Decision
	last    *Period
	moves   []string
	drifts  []string
	counts  [][]string
}

func TestEngineCases(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "steer", "cases", "*.txt"))
	if len(files) == 0 {
		t.Fatal("no cases")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runCase(t, f) })
	}
}

func runCase(t *testing.T, path string) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := &simCase{busy: map[int]float64{}, joiner: NewJoiner(0), skb: 0xffff888000000000}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if err := c.do(t, fields); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
	}
	c.check(t)
}

func (c *simCase) do(t *testing.T, f []string) error {
	kv := keyValues(f[1:])
	switch f[0] {
	case "options":
		c.opts = Options{Periods: atoi(kv["periods"]), Majority: atof(kv["majority"]), MinPackets: uint64(atoi(kv["min"]))}
	case "cpus":
		set, err := host.ParseCPUList(f[2])
		if err != nil {
			return err
		}
		for _, id := range set.CPUs() {
			c.topo.CPUs = append(c.topo.CPUs, TopoCPU{ID: id, Node: atoi(kv["node"]), Core: id})
		}
	case "host": // host NAME [domain=llc]: the topology of testdata/steer/hosts/NAME
		fs, err := host.NewFS(filepath.Join("..", "..", "testdata", "steer", "hosts", f[1]))
		if err != nil {
			return err
		}
		snap, err := host.Read(fs, host.Options{NoProcesses: true})
		if err != nil {
			return err
		}
		c.topo, err = TopologyIn(snap, kv["domain"])
		return err
	case "core":
		set, err := host.ParseCPUList(f[1])
		if err != nil {
			return err
		}
		for i := range c.topo.CPUs {
			if set.Contains(c.topo.CPUs[i].ID) {
				c.topo.CPUs[i].Core = set.CPUs()[0]
			}
		}
	case "irq":
		set, err := host.ParseCPUList(kv["affinity"])
		if err != nil {
			return err
		}
		c.irqs = append(c.irqs, QueueIRQ{IRQ: atoi(f[1]), Queue: QueueKey{Dev: f[2], Queue: atoi(f[3])}, Affinity: set})
	case "redis":
		set, err := host.ParseCPUList(f[1])
		c.redis = set
		return err
	case "busy":
		for k, v := range kv {
			c.busy[atoi(k)] = atof(v)
		}
	case "dryrun":
		c.dryrun = true
	case "flow":
		c.flow(kv)
	case "gro":
		c.joiner.Add(Event{Kind: EventGRO, CPU: uint32(atoi(kv["cpu"])), Dev: kv["dev"], QueueMapping: uint16(atoi(kv["mapping"])), Skb: hex(kv["skb"])})
	case "copy":
		c.joiner.Add(Event{Kind: EventCopy, CPU: uint32(atoi(kv["cpu"])), PID: uint32(atoi(kv["pid"])), Skb: hex(kv["skb"])})
	case "target":
		c.joiner.Target = map[uint32]bool{}
		for _, p := range strings.Split(f[1], ",") {
			c.joiner.Target[uint32(atoi(p))] = true
		}
	case "set":
		return c.set(atoi(f[1]), kv["affinity"])
	case "period":
		c.check(t)
		c.runPeriod()
	case "expect":
		return c.expect(f[1:])
	default:
		return fmt.Errorf("unknown line %q", strings.Join(f, " "))
	}
	return nil
}

func (c *simCase) flow(kv map[string]string) {
	for i := 0; i < atoi(kv["n"]); i++ {
		c.skb += 256
		c.joiner.Add(Event{Kind: EventGRO, CPU: uint32(atoi(kv["softirq"])), Dev: kv["dev"], QueueMapping: uint16(atoi(kv["mapping"])), Skb: c.skb})
		c.joiner.Add(Event{Kind: EventCopy, CPU: uint32(atoi(kv["cpu"])), PID: uint32(atoi(kv["pid"])), TID: uint32(atoi(kv["pid"])), Skb: c.skb})
	}
}

func (c *simCase) set(irq int, list string) error {
	set, err := host.ParseCPUList(list)
	for i := range c.irqs {
		if c.irqs[i].IRQ == irq {
			c.irqs[i].Affinity = set
		}
	}
	return err
}

func (c *simCase) runPeriod() {
	if c.engine == nil {
		c.engine = NewEngine(c.opts)
	}
	c.period++
	c.last = c.joiner.Cut()
	d := c.engine.Step(Input{Period: c.last, Topology: c.topo, IRQs: c.irqs, RedisCPUs: c.redis, Busy: c.busy})
	c.pending = &d
	c.moves, c.drifts, c.counts = nil, nil, nil
	if c.dryrun {
		return
	}
	for _, m := range d.Moves {
		c.set(m.IRQ, strconv.Itoa(m.To))
		c.engine.Applied(m)
	}
}

func (c *simCase) expect(f []string) error {
	switch {
	case len(f) == 4 && f[0] == "move" && f[2] == "->":
		c.moves = append(c.moves, f[1]+" -> "+f[3])
	case len(f) == 2 && f[0] == "drift":
		c.drifts = append(c.drifts, f[1])
	case len(f) >= 2 && f[0] == "count":
		c.counts = append(c.counts, f[1:])
	default:
		return fmt.Errorf("bad expect %q", strings.Join(f, " "))
	}
	return nil
}

// check compares the last period's decision with its expect lines.
func (c *simCase) check(t *testing.T) {
	t.Helper()
	if c.pending == nil {
		return
	}
	var moves, drifts []string
	for _, m := range c.pending.Moves {
		moves = append(moves, fmt.Sprintf("%d -> %d", m.IRQ, m.To))
	}
	for _, d := range c.pending.Drifts {
		drifts = append(drifts, strconv.Itoa(d.IRQ))
	}
	if d := cmp.Diff(c.moves, moves); d != "" {
		t.Errorf("period %d moves (-want +got):\n%s\ndecision: %+v", c.period, d, c.pending)
	}
	if d := cmp.Diff(c.drifts, drifts); d != "" {
		t.Errorf("period %d drifts (-want +got):\n%s", c.period, d)
	}
	for _, want := range c.counts {
		c.checkCount(t, want)
	}
	for _, m := range c.pending.Moves {
		if m.Reason == "" {
			t.Errorf("period %d: move of irq %d has no reason", c.period, m.IRQ)
		}
		t.Logf("period %d: irq %d (%s q%d) %s -> %d: %s", c.period, m.IRQ, m.Queue.Dev, m.Queue.Queue, m.From.List(), m.To, m.Reason)
	}
	c.pending = nil
}

// checkCount compares one "expect count" line with the last period.
func (c *simCase) checkCount(t *testing.T, want []string) {
	t.Helper()
	kv := keyValues(want)
	if !strings.Contains(want[0], "=") {
		var k QueueKey
		if err := k.UnmarshalText([]byte(want[0])); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{"matched": "0", "received": "0"}
		if qc := c.last.Queues[k]; qc != nil {
			got["matched"], got["received"] = strconv.FormatUint(qc.Matched, 10), strconv.FormatUint(qc.Received, 10)
			for cpu, n := range qc.Consumers {
				got["cpu="+strconv.Itoa(cpu)] = strconv.FormatUint(n, 10)
			}
		}
		for _, w := range want[1:] {
			k, v, _ := strings.Cut(w, "=")
			if k == "cpu" {
				cpu, n, _ := strings.Cut(v, ":")
				k, v = "cpu="+cpu, n
			}
			if got[k] != v {
				t.Errorf("period %d: %s %s = %s, want %s", c.period, want[0], k, got[k], v)
			}
		}
		return
	}
	got := map[string]string{"unmatched": strconv.FormatUint(c.last.Unmatched, 10), "filtered": strconv.FormatUint(c.last.Filtered, 10)}
	for k, v := range kv {
		if got[k] != v {
			t.Errorf("period %d: %s = %s, want %s", c.period, k, got[k], v)
		}
	}
}

func hex(s string) uint64 { n, _ := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64); return n }

func keyValues(f []string) map[string]string {
	m := map[string]string{}
	for _, s := range f {
		if k, v, ok := strings.Cut(s, "="); ok {
			m[k] = v
		}
	}
	return m
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func atof(s string) float64 { f, _ := strconv.ParseFloat(s, 64); return f }
