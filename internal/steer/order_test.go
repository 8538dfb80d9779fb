package steer

import "testing"

// TestTimeOrderJoinsAcrossRings: the copy of an skb sits in CPU 0's ring
// and its GRO entry in CPU 1's; read ring by ring, the copy came first
// and found no entry (unmatched), and the entry stayed pending. Ordered by
// time the two match, and a record past the mark waits for the next
// drain.
func TestTimeOrderJoinsAcrossRings(t *testing.T) {
	j := NewJoiner(0)
	j.Target = map[uint32]bool{7: true}
	var o timeOrder
	o.add(Event{Kind: EventCopy, CPU: 0, PID: 7, TID: 7, Skb: 0xffff1000, Time: 20})              // ring 0
	o.add(Event{Kind: EventGRO, CPU: 1, Skb: 0xffff1000, Dev: "eth0", QueueMapping: 1, Time: 10}) // ring 1
	o.add(Event{Kind: EventGRO, CPU: 1, Skb: 0xffff2000, Dev: "eth0", QueueMapping: 1, Time: 40}) // after the mark
	o.flush(30, j.Add)
	p := j.Cut()
	q := p.Queues[QueueKey{Dev: "eth0", Queue: 0}]
	if q == nil || q.Received != 1 || q.Matched != 1 || p.Unmatched != 0 {
		t.Fatalf("period %+v, queue %+v: want the entry and its copy matched, the later entry held", p, q)
	}
	if len(o.buf) != 1 || o.buf[0].Time != 40 {
		t.Errorf("held back %+v, want the record at 40", o.buf)
	}
}
