package steer

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Tracepoints the sampler reads.
const (
	groGroup, groName   = "net", "napi_gro_receive_entry"
	copyGroup, copyName = "skb", "skb_copy_datagram_iovec"
)

// EventKind says which tracepoint an Event came from.
type EventKind uint8

// Event kinds.
const (
	EventGRO  EventKind = iota + 1 // a device queue received an skb
	EventCopy                      // a thread copied an skb to user space
)

// Event is one decoded tracepoint sample.
type Event struct {
	Kind EventKind
	CPU  uint32
	// Time is when it happened, in CLOCK_MONOTONIC nanoseconds
	// (PERF_SAMPLE_TIME with use_clockid): the sampler orders the rings'
	// records by it.
	Time uint64
	PID  uint32 // thread group id of the running task
	TID  uint32
	Skb  uint64
	// Dev and QueueMapping are set for EventGRO. QueueMapping is the
	// skb's queue_mapping as the tracepoint saw it: rx queue + 1 for
	// drivers that record it (skb_record_rx_queue), see QueueOf.
	Dev          string
	QueueMapping uint16
}

// ErrShort is returned for a record shorter than its layout says.
var ErrShort = errors.New("short perf record")

// Decoder decodes perf samples (PERF_SAMPLE_TID|TIME|CPU|RAW) of the two
// tracepoints, with field offsets read from tracefs.
type Decoder struct {
	groID, copyID uint16
	groName       Field
	groQueue      Field
	groSkb        Field
	copySkb       Field
	devs          map[string]string // interned device names
	last          string            // the last name decoded
}

// NewDecoder checks both formats have the fields the sampler needs.
func NewDecoder(gro, cp Format) (*Decoder, error) {
	d := &Decoder{groID: uint16(gro.ID), copyID: uint16(cp.ID), devs: map[string]string{}}
	var err error
	if d.groName, err = gro.need("name"); err != nil {
		return nil, err
	}
	if d.groQueue, err = gro.need("queue_mapping", 2); err != nil {
		return nil, err
	}
	if d.groSkb, err = gro.need("skbaddr", 4, 8); err != nil {
		return nil, err
	}
	if d.copySkb, err = cp.need("skbaddr", 4, 8); err != nil {
		return nil, err
	}
	if gro.ID == cp.ID || gro.ID > 0xffff || cp.ID > 0xffff {
		return nil, fmt.Errorf("tracepoint ids %d and %d cannot be told apart", gro.ID, cp.ID)
	}
	return d, nil
}

// sampleHead is pid, tid (PERF_SAMPLE_TID), time (PERF_SAMPLE_TIME),
// cpu, reserved (PERF_SAMPLE_CPU) and the raw size (PERF_SAMPLE_RAW), in
// the kernel's order.
const sampleHead = 4*2 + 8 + 4*2 + 4

// Decode decodes the body of a PERF_RECORD_SAMPLE (after the 8-byte
// perf_event_header). It never panics on malformed input.
func (d *Decoder) Decode(b []byte) (Event, error) {
	var ev Event
	if len(b) < sampleHead {
		return ev, ErrShort
	}
	ne := binary.NativeEndian
	ev.PID, ev.TID, ev.Time, ev.CPU = ne.Uint32(b[0:]), ne.Uint32(b[4:]), ne.Uint64(b[8:]), ne.Uint32(b[16:])
	n := int(ne.Uint32(b[24:]))
	if n < 2 || n > len(b)-sampleHead {
		return ev, ErrShort
	}
	return d.decodeRaw(ev, b[sampleHead:sampleHead+n])
}

// decodeRaw decodes the tracepoint record; its first u16 is the
// tracepoint id (common_type).
func (d *Decoder) decodeRaw(ev Event, raw []byte) (Event, error) {
	switch binary.NativeEndian.Uint16(raw) {
	case d.groID:
		ev.Kind = EventGRO
		skb, ok := uintAt(raw, d.groSkb)
		q, ok2 := uintAt(raw, d.groQueue)
		dev, ok3 := d.str(raw, d.groName)
		if !ok || !ok2 || !ok3 {
			return ev, ErrShort
		}
		ev.Skb, ev.QueueMapping, ev.Dev = skb, uint16(q), dev
	case d.copyID:
		ev.Kind = EventCopy
		skb, ok := uintAt(raw, d.copySkb)
		if !ok {
			return ev, ErrShort
		}
		ev.Skb = skb
	default:
		return ev, fmt.Errorf("unknown tracepoint id %d", binary.NativeEndian.Uint16(raw))
	}
	return ev, nil
}

// uintAt reads an unsigned field of size 1, 2, 4 or 8.
func uintAt(raw []byte, f Field) (uint64, bool) {
	if f.Offset < 0 || f.Offset+f.Size > len(raw) {
		return 0, false
	}
	b, ne := raw[f.Offset:], binary.NativeEndian
	switch f.Size {
	case 1:
		return uint64(b[0]), true
	case 2:
		return uint64(ne.Uint16(b)), true
	case 4:
		return uint64(ne.Uint32(b)), true
	case 8:
		return ne.Uint64(b), true
	}
	return 0, false
}

// str reads a __data_loc string: a u32 holding length<<16 | offset of a
// NUL-terminated string within the record.
func (d *Decoder) str(raw []byte, f Field) (string, bool) {
	loc, ok := uintAt(raw, f)
	if !ok {
		return "", false
	}
	off, n := int(loc&0xffff), int(loc>>16)
	if off+n > len(raw) {
		return "", false
	}
	b := raw[off : off+n]
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
	}
	if d.last != "" && string(b) == d.last { // no allocation: compared in place
		return d.last, true
	}
	if s, ok := d.devs[string(b)]; ok {
		d.last = s
		return s, true
	}
	s := string(b)
	if len(d.devs) < 4096 {
		d.devs[s] = s
	}
	return s, true
}
