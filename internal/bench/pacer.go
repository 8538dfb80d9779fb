package bench

import "time"

// pacer is an open-loop (--rate) schedule: when each request of one event
// loop is due. Latency is measured from the due time, not the actual
// write, so a request that waits because the server is slow still counts
// the wait (no coordinated omission). A loop that falls behind sends its
// backlog at once: a due time never depends on when it is asked for.
type pacer interface {
	// due returns when the loop's request n (from 0) should be sent, in
	// nanoseconds on the run's clock.
	due(n int64) int64
}

// fixedRate spreads a total rate evenly over the event loops: each loop
// sends every loops/rate seconds, and loop id starts id/loops of an
// interval late so that the loops' requests interleave instead of leaving
// together.
type fixedRate struct {
	first, interval int64
}

func newFixedRate(rate float64, loops, id int, start int64) fixedRate {
	interval := int64(float64(time.Second) * float64(loops) / rate)
	return fixedRate{first: start + int64(id)*interval/int64(loops), interval: interval}
}

func (p fixedRate) due(n int64) int64 { return p.first + n*p.interval }
