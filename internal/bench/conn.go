package bench

// connState is where a connection is in its life.
type connState uint8

const (
	stConnecting connState = iota // non-blocking connect in progress
	stHandshake                   // AUTH/TRACKING/SELECT/HELLO replies pending
	stReady                       // set up, waiting for the measurement to start
	stActive                      // sending and receiving the workload
	stDone                        // nothing more to send, nothing outstanding
	stDown                        // --reconnect: failed, to be dialled again at redialAt
)

// pending is one request written (or, in rate mode, due) and not yet
// answered.
type pending struct {
	sent     int64 // when it was written, ns since the run's origin
	intended int64 // when it was due (rate mode); == sent in closed loop
	class    uint8 // index of the command in a mix
	measured bool  // false for warm-up requests
	// --cluster: the request's bytes in its connection's sent log, kept
	// to send it again on a redirection; asking marks an ASKING prefix.
	size   uint32
	asking bool
	// redirects counts the MOVED and ASK replies the request followed.
	redirects uint8
	// extra counts the replies still due before the request's own last
	// one (a MULTI ... EXEC group of a workload file).
	extra uint16
}

// queue is a FIFO of pending requests: replies come back in order.
type queue struct {
	buf        []pending
	head, size int
}

func (q *queue) push(p pending) {
	if q.size == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+q.size)%len(q.buf)] = p
	q.size++
}

func (q *queue) pop() pending {
	p := q.buf[q.head]
	q.head++
	if q.head == len(q.buf) {
		q.head = 0
	}
	q.size--
	return p
}

func (q *queue) grow() {
	n := make([]pending, max(16, 2*len(q.buf)))
	for i := range q.size {
		n[i] = q.buf[(q.head+i)%len(q.buf)]
	}
	q.buf, q.head = n, 0
}

// conn is one connection's protocol state. The event loop owns it; no
// locks.
type conn struct {
	fd       int
	state    connState
	out      []byte // bytes to write
	outOff   int
	in       []byte // bytes read and not yet consumed
	q        queue
	prefix   int   // handshake replies still to discard
	lastIO   int64 // last complete reply, or the write that started a wait
	wantOut  bool  // registered for EPOLLOUT after a short write
	started  int64 // connect start, for the connect timeout
	batchEnd bool  // closed loop: the current batch is fully answered
	retries  int   // failed connects retried since the last success

	// --reconnect: when to dial again, the next backoff, the kind of
	// the failure that took it down, and a failure met while reading
	// (kind+1; 0: none) to act on once the read is consumed.
	redialAt int64
	backoff  int64
	downKind uint8
	drop     uint8
	redialed bool // set up again after a failure (counted when ready)
	// --sentinel: the worker's primaryVer when it was dialled.
	primaryVer uint64

	// --cluster: the node the connection goes to, its client group
	// (closed loop) and the bytes of the requests it has outstanding.
	node     uint16
	grp      *clientGroup
	sent     []byte
	sentHead int
}

const readChunk = 64 << 10
