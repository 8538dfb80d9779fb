package steer

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"redline/internal/host"
)

// SamplerOptions configure a Sampler.
type SamplerOptions struct {
	// CPUs to sample on; default every online CPU.
	CPUs []int
	// RingPages is each CPU's ring buffer size in pages (a power of two);
	// default DefaultRingPages.
	RingPages int
	// Drain is how often the rings are read when they are not half full;
	// default DefaultDrain.
	Drain time.Duration
	// Pending bounds the skbs in flight in the Joiner (DefaultPending).
	Pending int
	// Sample, a power of two, follows about one skb in Sample: the kernel
	// drops the others' records of both tracepoints before they reach the
	// ring (a filter on skbaddr bits above the slab object size). The
	// selection depends on where an skb was allocated, not on its queue or
	// consumer, so the shares per node stay fair; the fraction kept is not
	// exact (NAPI recycles a few skb addresses per CPU). 0 or 1 follows
	// every skb.
	Sample int
	// Consumers, when set, keeps only the copies made by these threads
	// (tids, the kernel's common_pid): the kernel drops the others' before
	// they reach the ring. On a host busy with other traffic (loopback,
	// other services) that is most copy events. The kernel takes a perf
	// tracepoint filter once, so the set is fixed for the sampler's life.
	Consumers []int
}

// sampleFilter is the tracepoint filter that keeps one skb in n, judged
// by skbaddr bits 10 and up: received sk_buffs are 256-byte slab objects
// (skbuff_head_cache) or, for veth, the sender's 512-byte fclones, so
// the bits below 10 are constant for some of them.
func sampleFilter(n int) string {
	if n <= 1 || n&(n-1) != 0 {
		return ""
	}
	return fmt.Sprintf("!(skbaddr & %#x)", (n-1)<<10)
}

// Defaults for SamplerOptions.
const (
	DefaultRingPages = 256 // 1 MiB per CPU with 4 KiB pages
	DefaultDrain     = 50 * time.Millisecond
	DefaultSample    = 8
)

// Sampler reads the two tracepoints on every CPU and feeds a Joiner.
type Sampler struct {
	dec    *Decoder
	sample string // the skb sampling filter, "" for none
	// Targeted is true when the kernel filters copies by thread.
	Targeted bool
	rings    []*ring
	epfd     int
	drain    time.Duration
	// Joiner receives every event. Its Target and ZeroBased are set
	// through Configure, also while Run runs (a retarget), never directly.
	Joiner *Joiner
	// pending is the last Configure's, applied by the reading loop
	// between batches: the Joiner is the loop's alone.
	cfgMu   sync.Mutex
	pending *joinConfig

	stop     chan struct{}  // closed by Close
	running  sync.WaitGroup // Run, which Close waits for before unmapping
	stopOnce sync.Once

	order timeOrder // records read, not yet joined

	events, lost, bad atomic.Uint64
	cpuNanos          atomic.Int64 // the reading thread's CPU time
}

// ring is one CPU's perf ring buffer, shared by both tracepoints.
type ring struct {
	cpu     int
	fds     []int
	mem     []byte
	meta    *unix.PerfEventMmapPage
	data    []byte
	scratch []byte
}

// NewSampler opens the tracepoints (root or CAP_PERFMON with tracefs
// access needed). Formats come from tracefs; Close releases everything.
func NewSampler(tfs *Tracefs, o SamplerOptions) (*Sampler, error) {
	gro, err := ReadFormat(tfs.Dir, groGroup, groName)
	if err != nil {
		return nil, err
	}
	cp, err := ReadFormat(tfs.Dir, copyGroup, copyName)
	if err != nil {
		return nil, err
	}
	dec, err := NewDecoder(gro, cp)
	if err != nil {
		return nil, err
	}
	o = o.withDefaults()
	s := &Sampler{dec: dec, drain: o.Drain, Joiner: NewJoiner(o.Pending), epfd: -1, sample: sampleFilter(o.Sample), Targeted: len(o.Consumers) > 0, stop: make(chan struct{})}
	if s.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	for _, cpu := range o.CPUs {
		r, err := openRing(cpu, o.RingPages, []string{s.sample, copyFilter(o.Consumers, s.sample)}, gro.ID, cp.ID)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.rings = append(s.rings, r)
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(len(s.rings) - 1)}
		if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, r.fds[0], &ev); err != nil {
			s.Close()
			return nil, fmt.Errorf("epoll add: %w", err)
		}
	}
	return s, nil
}

func (o SamplerOptions) withDefaults() SamplerOptions {
	if len(o.CPUs) == 0 {
		o.CPUs = onlineCPUs()
	}
	if o.RingPages <= 0 || o.RingPages&(o.RingPages-1) != 0 {
		o.RingPages = DefaultRingPages
	}
	if o.Drain <= 0 {
		o.Drain = DefaultDrain
	}
	return o
}

// onlineCPUs lists the online CPUs (perf needs them); CPUs brought
// online later are not sampled.
func onlineCPUs() []int {
	if b, err := os.ReadFile("/sys/devices/system/cpu/online"); err == nil {
		if set, err := host.ParseCPUList(strings.TrimSpace(string(b))); err == nil && !set.IsEmpty() {
			return set.CPUs()
		}
	}
	cpus := make([]int, runtime.NumCPU())
	for i := range cpus {
		cpus[i] = i
	}
	return cpus
}

// openRing opens both tracepoints on one CPU, the second writing into
// the first's ring.
func openRing(cpu, pages int, filters []string, ids ...uint64) (*ring, error) {
	r := &ring{cpu: cpu, scratch: make([]byte, 0, 512)}
	pageSize := unix.Getpagesize()
	for i, id := range ids {
		attr := unix.PerfEventAttr{
			Type:        unix.PERF_TYPE_TRACEPOINT,
			Size:        uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
			Config:      id,
			Sample:      1,
			Sample_type: unix.PERF_SAMPLE_TID | unix.PERF_SAMPLE_TIME | unix.PERF_SAMPLE_CPU | unix.PERF_SAMPLE_RAW,
			Bits:        unix.PerfBitDisabled | unix.PerfBitWatermark | unix.PerfBitUseClockID,
			Clockid:     unix.CLOCK_MONOTONIC,
			Wakeup:      uint32(pages * pageSize / 2),
		}
		fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			r.close()
			return nil, fmt.Errorf("perf_event_open tracepoint %d on cpu %d: %w (run as root)", id, cpu, err)
		}
		r.fds = append(r.fds, fd)
		if err := setFilter(fd, filters[i]); err != nil {
			r.close()
			return nil, fmt.Errorf("tracepoint filter %q on cpu %d: %w", filters[i], cpu, err)
		}
		if i == 0 {
			mem, err := unix.Mmap(fd, 0, (pages+1)*pageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
			if err != nil {
				r.close()
				return nil, fmt.Errorf("mmap perf ring on cpu %d: %w", cpu, err)
			}
			r.mem = mem
			r.meta = (*unix.PerfEventMmapPage)(unsafe.Pointer(&mem[0]))
			r.data = mem[pageSize:]
		} else if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_SET_OUTPUT, r.fds[0]); err != nil {
			r.close()
			return nil, fmt.Errorf("perf set output on cpu %d: %w", cpu, err)
		}
	}
	for _, fd := range r.fds {
		if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_ENABLE, 0); err != nil {
			r.close()
			return nil, fmt.Errorf("perf enable on cpu %d: %w", cpu, err)
		}
	}
	return r, nil
}

// copyFilter is the copy tracepoint's filter: the sampling filter and,
// with tids, only those threads.
func copyFilter(tids []int, sample string) string {
	if len(tids) == 0 {
		return sample
	}
	var b strings.Builder
	b.WriteString("(")
	for i, t := range tids {
		if i > 0 {
			b.WriteString(" || ")
		}
		fmt.Fprintf(&b, "common_pid == %d", t)
	}
	b.WriteString(")")
	if sample != "" {
		b.WriteString(" && " + sample)
	}
	return b.String()
}

// setFilter sets a tracepoint filter (PERF_EVENT_IOC_SET_FILTER).
func setFilter(fd int, filter string) error {
	if filter == "" {
		return nil
	}
	b, err := unix.BytePtrFromString(filter)
	if err != nil {
		return err
	}
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.PERF_EVENT_IOC_SET_FILTER, uintptr(unsafe.Pointer(b))); e != 0 {
		return e
	}
	return nil
}

func (r *ring) close() {
	for _, fd := range r.fds {
		unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_DISABLE, 0)
	}
	if r.mem != nil {
		unix.Munmap(r.mem)
		r.mem = nil
	}
	for _, fd := range r.fds {
		unix.Close(fd)
	}
	r.fds = nil
}

// Close stops sampling and frees the rings; a Run in progress returns
// first.
func (s *Sampler) Close() error {
	s.stopOnce.Do(func() { close(s.stop) })
	s.running.Wait()
	for _, r := range s.rings {
		r.close()
	}
	s.rings = nil
	if s.epfd >= 0 {
		unix.Close(s.epfd)
		s.epfd = -1
	}
	return nil
}

// errClosed is Run's error after Close.
var errClosed = errors.New("sampler closed")

// SamplerStats are the sampler's running totals.
type SamplerStats struct {
	Events uint64 `json:"events"` // samples decoded
	Lost   uint64 `json:"lost"`   // samples the kernel dropped
	Bad    uint64 `json:"bad"`    // samples that did not decode
	// CPU is the user+system time of the thread reading the rings, as of
	// the last period (the kernel's cost of writing the samples is
	// charged to the threads that hit the tracepoints).
	CPU time.Duration `json:"cpu_ns"`
}

// Stats returns the running totals; safe from any goroutine.
func (s *Sampler) Stats() SamplerStats {
	return SamplerStats{Events: s.events.Load(), Lost: s.lost.Load(), Bad: s.bad.Load(), CPU: time.Duration(s.cpuNanos.Load())}
}

// threadCPU is the calling thread's user+system time.
func threadCPU() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_THREAD, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Run reads the rings until ctx ends, and every period sends the
// Joiner's counts on out (dropping them if nobody reads). It returns
// ctx's error, or the first error reading the rings.
func (s *Sampler) Run(ctx context.Context, period time.Duration, out chan<- *Period) error {
	s.running.Add(1)
	defer s.running.Done()
	select {
	case <-s.stop:
		return errClosed
	default:
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	base := threadCPU() - time.Duration(s.cpuNanos.Load())
	evs := make([]unix.EpollEvent, len(s.rings))
	next := time.Now().Add(period)
	defer func() { s.cpuNanos.Store(int64(threadCPU() - base)) }()
	for ctx.Err() == nil {
		select {
		case <-s.stop:
			return errClosed
		default:
		}
		wait := min(s.drain, time.Until(next))
		if _, err := unix.EpollWait(s.epfd, evs, int(max(wait, 0)/time.Millisecond)); err != nil && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("epoll wait: %w", err)
		}
		s.DrainAll()
		if !time.Now().Before(next) {
			next = next.Add(period)
			s.cpuNanos.Store(int64(threadCPU() - base))
			select {
			case out <- s.Joiner.Cut():
			default:
			}
		}
	}
	return ctx.Err()
}

// joinConfig is which processes' copies count and which devices number
// their queues from 0 (Configure).
type joinConfig struct {
	target    map[uint32]bool
	zeroBased func(dev string) bool
}

// applyConfig hands the Joiner the last Configure's settings, on the
// reading thread.
func (s *Sampler) applyConfig() {
	s.cfgMu.Lock()
	c := s.pending
	s.pending = nil
	s.cfgMu.Unlock()
	if c != nil {
		s.Joiner.Target, s.Joiner.ZeroBased = c.target, c.zeroBased
	}
}

// DrainAll reads every ring to its head and hands the Joiner, in time
// order, every record no ring can still precede: a copy on one CPU and
// its GRO entry on another are joined in the order they happened, not in
// the order the rings are read (which made copies unmatched, and let a
// copy match the entry an earlier skb at its address left).
func (s *Sampler) DrainAll() {
	s.applyConfig()
	mark := uint64(math.MaxUint64)
	for _, r := range s.rings {
		// A record this ring gets after its head is read is newer than
		// now: records up to the smallest such now are all read.
		mark = min(mark, monotonicNow())
		r.drain(s.record)
	}
	s.order.flush(mark, s.Joiner.Add)
}

// monotonicNow is CLOCK_MONOTONIC in nanoseconds, the records' clock.
func monotonicNow() uint64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return math.MaxUint64
	}
	return uint64(ts.Nano())
}

// record handles one perf record.
func (s *Sampler) record(typ uint32, body []byte) {
	switch typ {
	case unix.PERF_RECORD_SAMPLE:
		ev, err := s.dec.Decode(body)
		if err != nil {
			s.bad.Add(1)
			return
		}
		s.events.Add(1)
		s.order.add(ev)
	case unix.PERF_RECORD_LOST:
		if len(body) >= 16 {
			n := binary.NativeEndian.Uint64(body[8:])
			s.lost.Add(n)
			s.Joiner.Lost(n)
		}
	}
}

// drain reads records between data_tail and data_head, then releases
// them to the kernel.
func (r *ring) drain(fn func(typ uint32, body []byte)) {
	head := atomic.LoadUint64(&r.meta.Data_head)
	tail := atomic.LoadUint64(&r.meta.Data_tail)
	size := uint64(len(r.data))
	for tail < head {
		hdr := r.at(tail, 8, size)
		typ := binary.NativeEndian.Uint32(hdr)
		n := uint64(binary.NativeEndian.Uint16(hdr[6:]))
		if n < 8 || tail+n > head {
			break
		}
		fn(typ, r.at(tail+8, n-8, size))
		tail += n
	}
	atomic.StoreUint64(&r.meta.Data_tail, tail)
}

// at returns n bytes at ring position pos, copying when they wrap.
func (r *ring) at(pos, n, size uint64) []byte {
	off := pos % size
	if off+n <= size {
		return r.data[off : off+n]
	}
	r.scratch = append(r.scratch[:0], r.data[off:]...)
	r.scratch = append(r.scratch, r.data[:n-(size-off)]...)
	return r.scratch
}
