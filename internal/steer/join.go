package steer

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unsafe"
)

// QueueKey names one receive queue of one device.
type QueueKey struct {
	Dev   string `json:"dev"`
	Queue int    `json:"queue"` // -1 when the driver did not record it
}

// QueueCounts is what one queue did in a period.
type QueueCounts struct {
	// Received counts GRO entries; Matched those whose copy to user space
	// was seen (and whose consumer passed the filter).
	Received uint64 `json:"received"`
	Matched  uint64 `json:"matched"`
	// Consumers counts matched packets by the CPU that copied them.
	Consumers map[int]uint64 `json:"consumers"`
	// SoftirqCPUs counts received packets by the CPU that ran NAPI
	// (where the queue's IRQ was delivered, or RPS/veth's choice).
	SoftirqCPUs map[int]uint64 `json:"softirq_cpus"`
}

// Period is one sampling period's counts.
type Period struct {
	Queues map[QueueKey]*QueueCounts `json:"queues"`
	// Unmatched counts copies of skbs no GRO entry was seen for
	// (loopback, skbs received before sampling began). Filtered counts
	// matched copies by threads outside the target.
	Unmatched uint64 `json:"unmatched"`
	Filtered  uint64 `json:"filtered"`
	// Lost counts samples the kernel dropped (ring buffer full).
	Lost uint64 `json:"lost"`
}

// Keys lists the period's queues in order.
func (p *Period) Keys() []QueueKey {
	ks := make([]QueueKey, 0, len(p.Queues))
	for k := range p.Queues {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].Dev != ks[j].Dev {
			return ks[i].Dev < ks[j].Dev
		}
		return ks[i].Queue < ks[j].Queue
	})
	return ks
}

// DefaultPending is the size of the table of skbs waiting for their copy
// (a power of two). A newer skb whose address hashes to the same entry
// replaces an older one: GRO merges skbs whose addresses are then never
// copied, and forwarded packets are never copied at all, so entries must
// age out without bookkeeping.
const DefaultPending = 1 << 16

// maxCPU bounds CPU numbers counted per queue.
const maxCPU = 4096

// Joiner matches GRO entries to copies by skb address. It does no map
// operation per packet: the pending table is an array indexed by a hash
// of the skb address, and queues are found through a small cache.
type Joiner struct {
	// Target, when not empty, keeps only copies by these processes
	// (thread group ids).
	Target map[uint32]bool
	// ZeroBased says whether a device's queue_mapping is the rx queue
	// itself rather than queue + 1 (see DriverQueues).
	ZeroBased func(dev string) bool

	pending []pendingSkb
	mask    uint64
	slots   []*slot
	index   map[QueueKey]int32
	recent  [8]recentKey
	next    int
	lost    uint64
	unmatch uint64
	filter  uint64
}

type pendingSkb struct {
	skb  uint64
	slot int32
}

// recentKey caches a (device, queue_mapping) to its slot; device names
// are interned by the Decoder, so equal names share their bytes.
type recentKey struct {
	dev     string
	mapping uint16
	slot    int32
}

type slot struct {
	key                QueueKey
	received, matched  uint64
	consumers, softirq []uint64
}

// NewJoiner returns a Joiner whose pending table has size entries
// (rounded up to a power of two; DefaultPending when 0).
func NewJoiner(size int) *Joiner {
	if size <= 0 {
		size = DefaultPending
	}
	n := 1
	for n < size {
		n <<= 1
	}
	j := &Joiner{pending: make([]pendingSkb, n), mask: uint64(n - 1), index: map[QueueKey]int32{}}
	for i := range j.recent {
		j.recent[i].slot = -1
	}
	return j
}

// QueueOf turns a queue_mapping into a queue index.
func (j *Joiner) QueueOf(dev string, mapping uint16) int {
	if j.ZeroBased != nil && j.ZeroBased(dev) {
		return int(mapping)
	}
	return int(mapping) - 1
}

// skbHash spreads skb addresses (cache-line aligned, from slabs) over
// the pending table.
func (j *Joiner) skbHash(skb uint64) uint64 {
	return (skb * 0x9e3779b97f4a7c15 >> 32) & j.mask
}

// Add feeds one event.
func (j *Joiner) Add(ev Event) {
	switch ev.Kind {
	case EventGRO:
		i := j.slotOf(ev.Dev, ev.QueueMapping)
		s := j.slots[i]
		s.received++
		count(&s.softirq, ev.CPU)
		j.pending[j.skbHash(ev.Skb)] = pendingSkb{skb: ev.Skb, slot: i + 1}
	case EventCopy:
		j.copied(ev)
	}
}

func (j *Joiner) copied(ev Event) {
	p := &j.pending[j.skbHash(ev.Skb)]
	switch {
	case p.slot == 0 || p.skb != ev.Skb:
		j.unmatch++
		return
	case len(j.Target) > 0 && !j.Target[ev.PID]:
		j.filter++
	default:
		s := j.slots[p.slot-1]
		s.matched++
		count(&s.consumers, ev.CPU)
	}
	*p = pendingSkb{}
}

func count(c *[]uint64, cpu uint32) {
	if cpu >= maxCPU {
		return
	}
	if int(cpu) >= len(*c) {
		*c = append(*c, make([]uint64, int(cpu)+1-len(*c))...)
	}
	(*c)[cpu]++
}

// slotOf finds or makes the slot of a device queue.
func (j *Joiner) slotOf(dev string, mapping uint16) int32 {
	for _, r := range j.recent {
		if r.slot >= 0 && r.mapping == mapping && len(r.dev) == len(dev) &&
			(len(dev) == 0 || unsafe.StringData(r.dev) == unsafe.StringData(dev) || r.dev == dev) {
			return r.slot
		}
	}
	k := QueueKey{Dev: dev, Queue: j.QueueOf(dev, mapping)}
	i, ok := j.index[k]
	if !ok {
		i = int32(len(j.slots))
		j.slots = append(j.slots, &slot{key: k})
		j.index[k] = i
	}
	j.recent[j.next] = recentKey{dev: dev, mapping: mapping, slot: i}
	j.next = (j.next + 1) % len(j.recent)
	return i
}

// Lost records samples the kernel dropped.
func (j *Joiner) Lost(n uint64) { j.lost += n }

// Cut ends the period and returns its counts; skbs in flight stay
// pending so a packet received at the end of one period and copied at
// the start of the next still counts.
func (j *Joiner) Cut() *Period {
	p := &Period{Queues: map[QueueKey]*QueueCounts{}, Unmatched: j.unmatch, Filtered: j.filter, Lost: j.lost}
	j.unmatch, j.filter, j.lost = 0, 0, 0
	for _, s := range j.slots {
		if s.received == 0 && s.matched == 0 {
			continue
		}
		p.Queues[s.key] = &QueueCounts{Received: s.received, Matched: s.matched,
			Consumers: nonZero(s.consumers), SoftirqCPUs: nonZero(s.softirq)}
		s.received, s.matched = 0, 0
		clear(s.consumers)
		clear(s.softirq)
	}
	return p
}

func nonZero(c []uint64) map[int]uint64 {
	m := map[int]uint64{}
	for cpu, n := range c {
		if n > 0 {
			m[cpu] = n
		}
	}
	return m
}

// String is "DEV:QUEUE" ("eth0:3").
func (k QueueKey) String() string { return k.Dev + ":" + strconv.Itoa(k.Queue) }

// MarshalText makes QueueKey a JSON map key.
func (k QueueKey) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText parses "DEV:QUEUE".
func (k *QueueKey) UnmarshalText(b []byte) error {
	s := string(b)
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return fmt.Errorf("queue %q: want DEV:QUEUE", s)
	}
	q, err := strconv.Atoi(s[i+1:])
	if err != nil {
		return fmt.Errorf("queue %q: want DEV:QUEUE", s)
	}
	k.Dev, k.Queue = s[:i], q
	return nil
}

// add adds another period's counts of the same queue.
func (q *QueueCounts) add(o *QueueCounts) {
	q.Received += o.Received
	q.Matched += o.Matched
	for cpu, n := range o.Consumers {
		q.Consumers[cpu] += n
	}
	for cpu, n := range o.SoftirqCPUs {
		q.SoftirqCPUs[cpu] += n
	}
}
