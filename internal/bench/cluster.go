package bench

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"redline/internal/benchdata"
	"redline/internal/redisadmin"
	"redline/internal/resp"
)

// Cluster mode (Options.Cluster). Every client of -c is a group of
// connections, one to each primary; each request goes to the primary that
// serves its key's slot, so a batch of -P requests may span primaries and
// is done when all of them are answered. MOVED updates the loop's slot
// table, asks for a refresh of the whole topology (shared by the loops
// through an atomic pointer) and sends the request again where it belongs;
// ASK sends ASKING and the request to the importing node, once. A
// redirected request keeps its send time, so its latency includes the
// detour, and it counts once against -n.

// clusterRun is the cluster state shared by a run's loops.
type clusterRun struct {
	top *clusterTopology // primaries as found at the start; never changes
	// nodes are the connections' targets: the primaries (in top's
	// order), then with --read-from-replicas their replicas.
	nodes    []clusterTarget
	replicas [][]int // per primary: indices into nodes
	domains  []int
	addrs    []unix.Sockaddr
	keys     []int  // per command of the test: the key's argument index, 0 for none
	readonly []bool // per command: may go to a replica
	roPrefix []byte // the connection set-up commands plus READONLY

	table     atomic.Pointer[slotTable] // the latest refreshed slot map
	refresh   chan struct{}
	refreshes atomic.Int64
}

type slotTable struct {
	version uint64
	slots   [ClusterSlots]uint16
}

// clientGroup is one client: a connection to each primary, and how many
// requests of its current batch are unanswered.
type clientGroup struct {
	conns       []*conn
	outstanding int
}

// clusterWorker is one loop's view of the cluster.
type clusterWorker struct {
	run       *clusterRun
	slots     [ClusterSlots]uint16
	version   uint64
	addrs     []unix.Sockaddr // the loop's own copies (Connect writes into them)
	groups    []*clientGroup
	byNode    [][]*conn
	rr        []int
	keyless   int
	rrReplica int
	scratch   []byte
	redo      []byte
	// rate mode: a request generated but not yet sent (its node's
	// connections were all full).
	held         bool
	heldMeasured bool
	heldCls      uint8
	heldNode     uint16
}

// clusterRec is what a loop measured per node.
type clusterRec struct {
	nodes        []*hdr.Histogram
	moved, asked int64
}

var askingCmd = resp.AppendCommand(nil, "ASKING")

// prepareCluster reads the topology from the seed and where each
// command's key is.
func (r *runner) prepareCluster(ctx context.Context) error {
	o := r.o
	top, err := fetchTopology(ctx, o, o.Addr)
	if err != nil {
		return err
	}
	if n := top.uncovered(); n > 0 {
		return fmt.Errorf("--cluster: %d of %d slots are served by no primary (CLUSTER SHARDS on %s): fix the cluster first (redis-cli --cluster fix)", n, ClusterSlots, o.Addr)
	}
	rc := &clusterRun{top: top, refresh: make(chan struct{}, 1)}
	if err := rc.addNodes(o.ReadFromReplicas, o.Reconnect); err != nil {
		return err
	}
	if rc.keys, rc.readonly, err = r.clusterKeys(ctx); err != nil {
		return err
	}
	r.cluster = rc
	rc.roPrefix = resp.AppendCommand(append([]byte(nil), r.prefix...), "READONLY")
	if o.Threads == 0 {
		// redis-benchmark --cluster's default: one event loop per primary.
		o.Threads = len(top.nodes)
	}
	return nil
}

// clusterTarget is a node the run connects to.
type clusterTarget struct {
	addr, id string
	primary  int // for a replica, its primary's index; -1 for a primary
}

// addNodes lists the primaries, and their replicas when reads go there
// or when a replica may become a primary during the run (--reconnect: a
// failover's MOVED then names a node the run knows and is connected to).
func (rc *clusterRun) addNodes(replicas, follow bool) error {
	for _, n := range rc.top.nodes {
		rc.nodes = append(rc.nodes, clusterTarget{addr: n.Addr, id: n.ID, primary: -1})
	}
	rc.replicas = make([][]int, len(rc.top.nodes))
	for i, n := range rc.top.nodes {
		for _, a := range n.Replicas {
			if replicas {
				rc.replicas[i] = append(rc.replicas[i], len(rc.nodes))
			}
			if replicas || follow {
				rc.nodes = append(rc.nodes, clusterTarget{addr: a, primary: i})
			}
		}
	}
	if replicas && len(rc.nodes) == len(rc.top.nodes) {
		return fmt.Errorf("--read-from-replicas: no primary has an online replica (CLUSTER SHARDS); drop the option")
	}
	for _, n := range rc.nodes {
		d, sa, err := resolveTCP(n.addr)
		if err != nil {
			return fmt.Errorf("--cluster: node %s: %w", n.addr, err)
		}
		rc.domains, rc.addrs = append(rc.domains, d), append(rc.addrs, sa)
	}
	return nil
}

// index returns the node with address addr, or -1.
func (rc *clusterRun) index(addr string) int {
	for i, n := range rc.nodes {
		if n.addr == addr {
			return i
		}
	}
	return -1
}

// clusterKeys finds each command's key argument (--key-index, or COMMAND
// INFO's first key) and whether it only reads.
func (r *runner) clusterKeys(ctx context.Context) ([]int, []bool, error) {
	parts := r.test.Mix
	if len(parts) == 0 {
		parts = []MixPart{{Name: r.test.Title, Args: r.test.Args}}
	}
	keys, ro := make([]int, len(parts)), make([]bool, len(parts))
	c, err := redisadmin.Dial(ctx, r.o.adminOptions(r.o.Addr))
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	var names []string
	for _, p := range parts {
		names = append(names, p.Args[0])
	}
	info, err := fetchCommandKeys(ctx, c, names)
	if err != nil && r.o.KeyIndex == 0 {
		return nil, nil, err
	}
	for i, p := range parts {
		k := info[strings.ToLower(p.Args[0])]
		ro[i] = k.readonly
		if p.KeyIndex > 0 {
			keys[i] = p.KeyIndex
			continue
		}
		if r.o.KeyIndex > 0 {
			keys[i] = r.o.KeyIndex
			continue
		}
		if k.movable && k.first == 0 {
			return nil, nil, fmt.Errorf("--cluster: where %s's keys are depends on its arguments: give the key's position with --key-index N (1 is the first argument after the command name)", p.Args[0])
		}
		keys[i] = k.first
		if k.multi() && len(r.test.Mix) == 0 && r.test.Tagged != nil {
			r.test.Args = r.test.Tagged // its keys share a random slot per request
		}
	}
	return keys, ro, nil
}

func resolveTCP(addr string) (int, unix.Sockaddr, error) {
	a, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return 0, nil, err
	}
	if ip4 := a.IP.To4(); ip4 != nil {
		sa := &unix.SockaddrInet4{Port: a.Port}
		copy(sa.Addr[:], ip4)
		return unix.AF_INET, sa, nil
	}
	sa := &unix.SockaddrInet6{Port: a.Port}
	copy(sa.Addr[:], a.IP.To16())
	return unix.AF_INET6, sa, nil
}

// connsFor is how many connections clients need: one each, or one per
// primary each in cluster mode.
func (r *runner) connsFor(clients int) int {
	if r.cluster == nil {
		return clients
	}
	return clients * len(r.cluster.nodes)
}

// attachCluster splits the worker's connections into client groups.
func (r *runner) attachCluster(w *worker, clients int) {
	rc := r.cluster
	n := len(rc.nodes)
	cw := &clusterWorker{run: rc, slots: rc.top.slots, byNode: make([][]*conn, n), rr: make([]int, n)}
	for _, sa := range rc.addrs {
		cw.addrs = append(cw.addrs, copySockaddr(sa))
	}
	for g := range clients {
		grp := &clientGroup{conns: w.conns[g*n : (g+1)*n]}
		for i, c := range grp.conns {
			c.node = uint16(i)
			if r.o.Rate == 0 {
				c.grp = grp
			}
			cw.byNode[i] = append(cw.byNode[i], c)
		}
		cw.groups = append(cw.groups, grp)
	}
	w.cl = cw
	w.rec.cluster = &clusterRec{}
	for range n {
		w.rec.cluster.nodes = append(w.rec.cluster.nodes, hdr.New(1, int64(benchdata.MaxLatency), r.o.Precision))
	}
}

func copySockaddr(sa unix.Sockaddr) unix.Sockaddr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return &unix.SockaddrInet4{Port: a.Port, Addr: a.Addr}
	case *unix.SockaddrInet6:
		return &unix.SockaddrInet6{Port: a.Port, ZoneId: a.ZoneId, Addr: a.Addr}
	}
	return sa
}

// addrOf is where c connects to.
func (w *worker) addrOf(c *conn) (int, unix.Sockaddr) {
	if s := w.r.sentinel; s != nil {
		if p := s.current(); p.version+1 != w.primaryVer {
			w.primaryVer, w.domain, w.sockaddr = p.version+1, p.domain, copySockaddr(p.sa)
		}
	}
	if w.cl == nil {
		return w.domain, w.sockaddr
	}
	return w.cl.run.domains[c.node], w.cl.addrs[c.node]
}

// target names the server at the other end of c.
func (w *worker) target(c *conn) string {
	if w.r.sentinel != nil {
		return w.r.sentinel.current().addr
	}
	if w.cl == nil {
		return w.r.target
	}
	return w.cl.run.nodes[c.node].addr
}

// route returns the node a request goes to.
func (w *worker) route(req []byte, cls uint8) uint16 {
	cl := w.cl
	k := cl.run.keys[cls]
	if k == 0 {
		cl.keyless++
		return uint16(cl.keyless % len(cl.run.top.nodes))
	}
	key := respArg(req, k)
	if key == nil {
		return 0 // fewer arguments than the key index: the server will say so
	}
	n := cl.slots[HashSlot(key)]
	if n == noOwner {
		return 0
	}
	if int(n) >= len(cl.run.replicas) {
		return n // a replica promoted during the run (--reconnect)
	}
	if reps := cl.run.replicas[n]; len(reps) > 0 && cl.run.readonly[cls] {
		cl.rrReplica++
		return uint16(reps[cl.rrReplica%len(reps)])
	}
	return n
}

// handshake returns the set-up commands for c and how many they are:
// replicas also get READONLY.
func (w *worker) handshake(c *conn) ([]byte, int) {
	if w.cl != nil && w.r.o.ReadFromReplicas && w.cl.run.nodes[c.node].primary >= 0 {
		return w.cl.run.roPrefix, w.r.prefixCount + 1
	}
	return w.r.prefix, w.r.prefixCount
}

// startGroups sends every client's first batch.
func (w *worker) startGroups() error {
	for _, g := range w.cl.groups {
		if err := w.groupBatch(g); err != nil {
			return err
		}
	}
	return nil
}

// groupBatch sends a client's next batch of up to -P requests, each to its
// node.
func (w *worker) groupBatch(g *clientGroup) error {
	k := w.r.claim(w.r.o.Pipeline)
	if k == 0 {
		for _, c := range g.conns {
			w.finish(c)
		}
		return nil
	}
	measured := w.r.measuring.Load()
	cl := w.cl
	for range k {
		var cls uint8
		cl.scratch, cls = w.gen.appendRequest(cl.scratch[:0])
		c := g.conns[w.route(cl.scratch, cls)]
		c.out = append(c.out, cl.scratch...)
		c.sent = append(c.sent, cl.scratch...)
		c.q.push(pending{class: cls, measured: measured, size: uint32(len(cl.scratch)), extra: w.gen.extra})
	}
	now := w.r.now()
	for _, c := range g.conns {
		for i := range c.q.size {
			p := &c.q.buf[(c.q.head+i)%len(c.q.buf)]
			if p.sent == 0 {
				p.sent, p.intended = now, now
			}
		}
	}
	g.outstanding = k
	w.pending += k
	for _, c := range g.conns {
		if len(c.out) > c.outOff {
			c.lastIO = now
			if err := w.flush(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// clusterIssue sends one open-loop request due at due. The request is
// claimed and generated first (its key decides the node); when every
// connection to that node is full it is held, late, and sent first when
// one has room.
func (w *worker) clusterIssue(due, now int64) (bool, error) {
	cl := w.cl
	if !cl.held {
		if !w.r.claimDue(due, w.end) {
			w.issuing = false
			return false, nil
		}
		cl.scratch, cl.heldCls = w.gen.appendRequest(cl.scratch[:0])
		cl.held = true
		cl.heldMeasured = w.r.measuring.Load()
	}
	// Routed at each try: a refreshed slot map moves a request held for a
	// node that failed.
	cl.heldNode = w.route(cl.scratch, cl.heldCls)
	c := cl.pick(cl.heldNode, w.r.o.MaxPending)
	if c == nil {
		return false, nil
	}
	cl.held = false
	c.out = append(c.out, cl.scratch...)
	c.sent = append(c.sent, cl.scratch...)
	c.q.push(pending{sent: now, intended: due, class: cl.heldCls, measured: cl.heldMeasured, size: uint32(len(cl.scratch)), extra: w.gen.extra})
	if c.q.size == 1 {
		c.lastIO = now
	}
	w.pending++
	return true, w.flush(c)
}

// holding reports whether a claimed request waits for room.
func (w *worker) holding() bool { return w.cl != nil && w.cl.held }

// pick returns the next active connection to node with fewer than limit
// requests outstanding (limit 0: any), round-robin.
func (cl *clusterWorker) pick(node uint16, limit int) *conn {
	conns := cl.byNode[node]
	for range conns {
		c := conns[cl.rr[node]]
		if cl.rr[node]++; cl.rr[node] == len(conns) {
			cl.rr[node] = 0
		}
		if c.state == stActive && (limit == 0 || c.q.size < limit) {
			return c
		}
	}
	if limit == 0 && len(conns) > 0 {
		return conns[0]
	}
	return nil
}

// takeSent removes the oldest outstanding request's bytes from c's log.
func (c *conn) takeSent(n int) []byte {
	b := c.sent[c.sentHead : c.sentHead+n]
	c.sentHead += n
	if c.sentHead == len(c.sent) {
		c.sent, c.sentHead = c.sent[:0], 0
	} else if c.sentHead > 1<<16 && c.sentHead > len(c.sent)/2 {
		// An open loop may never empty the log: move the rest down,
		// after copying b out of its way.
		b = append([]byte(nil), b...)
		rest := copy(c.sent, c.sent[c.sentHead:])
		c.sent, c.sentHead = c.sent[:rest], 0
	}
	return b
}

// clusterReply handles one reply in cluster mode; the caller has popped p
// and holds the recorder's lock.
func (w *worker) clusterReply(c *conn, p pending, kind resp.Kind, reply []byte, now int64) error {
	req := c.takeSent(int(p.size))
	if p.asking {
		if kind == resp.KindError {
			return fmt.Errorf("node %s refused ASKING: %s", w.target(c), errorText(reply))
		}
		return nil
	}
	if kind == resp.KindError {
		if done, err := w.redirect(c, p, req, reply, now); done || err != nil {
			return err
		}
		return fmt.Errorf("node %s: %w", w.target(c), w.r.replyError(reply, p.class))
	}
	if p.measured {
		w.rec.record(p, now)
		w.rec.cluster.nodes[c.node].RecordValue(clampLatency(now - p.intended))
	}
	if c.grp != nil {
		c.grp.outstanding--
	}
	return nil
}

// maxRedirects is how many MOVED or ASK replies one request may follow
// before the run ends with an error (redis-cli and the cluster clients use
// a bound of the same order): two nodes that each send it to the other
// would otherwise keep a loop busy forever.
const maxRedirects = 16

// redirect follows a MOVED or ASK reply: false when reply is neither.
func (w *worker) redirect(c *conn, p pending, req, reply []byte, now int64) (bool, error) {
	moved := bytes.HasPrefix(reply, []byte("-MOVED "))
	if !moved && !bytes.HasPrefix(reply, []byte("-ASK ")) {
		return false, nil
	}
	f := strings.Fields(string(reply[1:]))
	slot, err := strconv.Atoi(f[min(1, len(f)-1)])
	if len(f) != 3 || err != nil || slot < 0 || slot >= ClusterSlots {
		return true, fmt.Errorf("node %s sent a malformed redirection: %q", w.target(c), clip(reply))
	}
	if p.redirects++; p.redirects > maxRedirects {
		return true, fmt.Errorf("a request for slot %d was redirected %d times (last by node %s to %s): the cluster's slot map keeps changing under the run, or its nodes disagree on who serves the slot", slot, maxRedirects, w.target(c), f[2])
	}
	cl := w.cl
	node := cl.run.index(f[2])
	if node < 0 {
		return true, fmt.Errorf("node %s redirected slot %d to %s, which was not in the cluster when the run started (nodes added during a run are not followed; run again)", w.target(c), slot, f[2])
	}
	cl.redo = append(cl.redo[:0], req...)
	if moved {
		cl.slots[slot] = uint16(node)
		w.rec.cluster.moved++
		cl.run.askRefresh()
	} else {
		w.rec.cluster.asked++
	}
	t := cl.pick(uint16(node), 0)
	if c.grp != nil {
		t = c.grp.conns[node]
	}
	if !moved {
		t.out = append(t.out, askingCmd...)
		t.sent = append(t.sent, askingCmd...)
		t.q.push(pending{asking: true, size: uint32(len(askingCmd)), sent: now, intended: now})
		w.pending++
	}
	t.out = append(t.out, cl.redo...)
	t.sent = append(t.sent, cl.redo...)
	t.q.push(p)
	w.pending++
	t.lastIO = now
	return true, w.flush(t)
}

// askRefresh asks for the slot map again.
func (rc *clusterRun) askRefresh() {
	select {
	case rc.refresh <- struct{}{}:
	default: // a refresh is already asked for
	}
}

// active reports whether the client still sends.
func (g *clientGroup) active() bool {
	for _, c := range g.conns {
		if c.state != stDone {
			return true
		}
	}
	return false
}

// clusterAfterRead sends a client's next batch when its last one is
// answered; in rate mode a connection with nothing left is done.
func (w *worker) clusterAfterRead(c *conn) error {
	if w.r.o.Rate == 0 {
		if g := c.grp; c.state == stActive && g.outstanding == 0 {
			return w.groupBatch(g)
		}
		return nil
	}
	if c.state == stActive && c.q.size == 0 && !w.issuing {
		w.finish(c)
	}
	return nil
}

// clusterRefreshed takes the latest refreshed slot map.
func (w *worker) clusterRefreshed() error {
	if w.cl == nil {
		return nil
	}
	if t := w.cl.run.table.Load(); t != nil && t.version != w.cl.version {
		w.cl.slots, w.cl.version = t.slots, t.version
	}
	return nil
}

// startRefresher refreshes the slot map whenever a loop saw MOVED, until
// the returned stop is called. A node the run did not start with keeps its
// slots on their old owner (its MOVED then ends the run with its name).
func (rc *clusterRun) startRefresher(o *Options) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var version uint64
		for {
			select {
			case <-quit:
				return
			case <-rc.refresh:
			}
			ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
			t, err := rc.fetch(ctx, o)
			cancel()
			if err != nil {
				continue // the loops keep what MOVED told them
			}
			version++
			t.version = version
			rc.table.Store(t)
			rc.refreshes.Add(1)
		}
	}()
	return func() { close(quit); <-done }
}

// fetch reads the topology from the first node that answers and maps it
// onto the run's nodes.
func (rc *clusterRun) fetch(ctx context.Context, o *Options) (*slotTable, error) {
	var last error
	for _, n := range rc.nodes { // a primary that failed does not answer
		top, err := fetchTopology(ctx, o, n.addr)
		if err != nil {
			last = err
			continue
		}
		t := &slotTable{slots: rc.top.slots}
		for s, idx := range top.slots {
			if idx == noOwner {
				continue
			}
			if i := rc.index(top.nodes[idx].Addr); i >= 0 && (rc.nodes[i].primary < 0 || o.Reconnect) {
				t.slots[s] = uint16(i) // with --reconnect, a replica promoted since
			}
		}
		return t, nil
	}
	return nil, last
}

// clusterPart is one loop's per-node histograms and redirections, with
// the nodes' roles (the loops' parts merge by address: mergeCluster).
func (r *runner) clusterPart(cr *clusterRec) *benchdata.Cluster {
	rc := r.cluster
	out := &benchdata.Cluster{Moved: cr.moved, Asked: cr.asked}
	for i, n := range rc.nodes {
		nr := benchdata.NodeResult{Addr: n.addr, ID: n.id, Role: "primary", Requests: cr.nodes[i].TotalCount(), Histogram: &benchdata.Histogram{Histogram: cr.nodes[i]}}
		if n.primary >= 0 {
			nr.Role, nr.Primary = "replica", rc.nodes[n.primary].addr
		} else {
			nr.Slots, nr.Replicas = rc.top.nodes[i].Slots, len(rc.top.nodes[i].Replicas)
		}
		out.Nodes = append(out.Nodes, nr)
	}
	return out
}
