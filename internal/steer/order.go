package steer

import "slices"

// timeOrder holds decoded records from the per-CPU rings until no ring
// can still deliver an older one, then releases them in time order
// (perf's own "ordered events", in small).
type timeOrder struct {
	buf []Event
}

func (o *timeOrder) add(ev Event) { o.buf = append(o.buf, ev) }

// flush hands fn, oldest first, every record at or before mark and keeps
// the rest; records of one time keep their reading order.
func (o *timeOrder) flush(mark uint64, fn func(Event)) {
	slices.SortStableFunc(o.buf, func(a, b Event) int {
		switch {
		case a.Time < b.Time:
			return -1
		case a.Time > b.Time:
			return 1
		}
		return 0
	})
	n := 0
	for n < len(o.buf) && o.buf[n].Time <= mark {
		fn(o.buf[n])
		n++
	}
	o.buf = append(o.buf[:0], o.buf[n:]...)
}
