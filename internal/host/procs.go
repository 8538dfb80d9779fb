package host

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"redline/internal/host/kernel"
	"redline/internal/secret"
)

// Processes are found by scanning /proc/PID/comm:
//
//	/proc/4242/comm      redis-server
//	/proc/4242/cmdline   redis-server\x00*:6379\x00
//	/proc/4242/ns/net -> net:[4026531833]
//	/proc/4242/fd/7   -> socket:[22220]

// procEntry is one process of the scan.
type procEntry struct {
	pid  int
	comm string
}

// processes scans /proc once; later callers share the result.
func (r *reader) processes() []procEntry {
	if r.scanned {
		return r.procs
	}
	r.scanned = true
	for _, pid := range numbered(r.dir("/proc"), "") {
		data, err := r.fs.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err != nil {
			continue // the process ended, or is hidden from us
		}
		r.procs = append(r.procs, procEntry{pid: pid, comm: strings.TrimSpace(string(data))})
	}
	return r.procs
}

func (r *reader) commOf(pid int) (string, bool) {
	for _, p := range r.processes() {
		if p.pid == pid {
			return p.comm, true
		}
	}
	return "", false
}

// readProcesses describes Options.PIDs, or every process named like a
// Redis server.
func readProcesses(r *reader) error {
	r.selfNetNS = r.ownNetNS()
	if r.opts.NoProcesses {
		return nil
	}
	pids := r.opts.PIDs
	for _, p := range r.processes() {
		if len(pids) > 0 && !slices.Contains(pids, p.pid) && slices.Contains(r.opts.Comms, p.comm) {
			r.snap.OtherServers = append(r.snap.OtherServers, p.pid)
		}
	}
	if len(pids) == 0 {
		for _, p := range r.processes() {
			if slices.Contains(r.opts.Comms, p.comm) {
				pids = append(pids, p.pid)
			}
		}
	}
	// every process is read, its fd scan started, before any scan is
	// waited for: the scans run while the rest is read
	type pending struct {
		p      Process
		finish func(*Process) error
	}
	var read []pending
	for _, pid := range pids {
		src := r.source
		r.source = fmt.Sprintf("process %d", pid)
		p, finish, err := readProcess(r, pid)
		var refused *refusedError
		switch {
		case err == nil:
			read = append(read, pending{p, finish})
		case errors.As(err, &refused):
			// refused, not gone: said in the errors and kept in view
			r.fail(err)
			r.snap.UnseenProcesses = append(r.snap.UnseenProcesses, UnseenProcess{PID: pid, Comm: refused.comm, Why: refused.err.Error()})
		case len(r.opts.PIDs) > 0:
			r.fail(err) // asked for by pid: say why it is missing
		}
		r.source = src
	}
	for _, pd := range read {
		src := r.source
		r.source = fmt.Sprintf("process %d", pd.p.PID)
		if pd.finish != nil {
			if err := pd.finish(&pd.p); err != nil {
				if len(r.opts.PIDs) > 0 {
					r.fail(fmt.Errorf("process %d (%s): %w", pd.p.PID, pd.p.Comm, err))
				}
				r.source = src
				continue
			}
		}
		r.snap.Processes = append(r.snap.Processes, pd.p)
		r.source = src
	}
	return nil
}

// readProcess describes one process. A process that ends between the
// scan and the read (or, in a capture, one that was only scanned) has no
// threads to read: it is reported gone rather than described empty. Its
// listeners and sockets come from finish (readProcNet), once its fd scan
// and dumps, which run beside the reader, are done.
func readProcess(r *reader, pid int) (p Process, finish func(*Process) error, err error) {
	p = Process{PID: pid, Threads: []Thread{}}
	comm, ok := r.commOf(pid)
	if !ok {
		return p, nil, fmt.Errorf("no /proc/%d (it is not running, or is hidden: check the pid)", pid)
	}
	p.Comm = comm
	if err := readThreads(r, &p); err != nil {
		return p, nil, &refusedError{pid, comm, err}
	}
	if len(p.Threads) == 0 {
		return p, nil, fmt.Errorf("process %d (%s): no threads under /proc/%d/task (it ended while being read)", pid, comm, pid)
	}
	if finish, err = readProcNet(r, &p); err != nil {
		return p, nil, fmt.Errorf("process %d (%s): %w", pid, comm, err)
	}
	if data, ok := r.file(fmt.Sprintf("/proc/%d/cmdline", pid)); ok {
		// A server started as redis-server --requirepass PW shows it
		// until it rewrites its title; a snapshot is stored, printed
		// and handed to a session's client.
		p.Cmdline = secret.Redact(splitCmdlineNUL(data))
	}
	readProcMemory(r, &p)
	if data, ok := r.file(fmt.Sprintf("/proc/%d/limits", pid)); ok {
		lim, err := parseOpenFilesLimit(data)
		if err != nil {
			r.fail(inFile(err, fmt.Sprintf("/proc/%d/limits", pid)))
		}
		p.OpenFiles = lim
	}
	p.Cgroup = readCgroup(r, pid)
	return p, finish, nil
}

func splitCmdlineNUL(data []byte) []string {
	data = bytes.TrimRight(data, "\x00")
	if len(data) == 0 {
		return nil
	}
	return strings.Split(string(data), "\x00")
}

// readProcMemory reads smaps_rollup and numa_maps (both need the
// process's owner or root).
func readProcMemory(r *reader, p *Process) {
	path := fmt.Sprintf("/proc/%d/smaps_rollup", p.PID)
	if data, ok := r.file(path); ok {
		v, err := parseSmapsRollup(data)
		if err != nil {
			r.fail(inFile(err, path))
		}
		p.AnonHugePages = v
	}
	path = fmt.Sprintf("/proc/%d/numa_maps", p.PID)
	if data, ok := r.file(path); ok {
		pages, bytesPerNode, err := parseNUMAMaps(data)
		if err != nil {
			r.fail(inFile(err, path))
		}
		if len(pages) > 0 {
			p.NUMAPages, p.NUMABytes = pages, bytesPerNode
		}
	}
}

// netnsOf reads a ns/net link ("net:[4026531833]") into its inode.
// ownNetNS is the reading thread's network namespace: a caller may have
// entered another namespace on a locked thread (the lab tunes a server in
// its own namespace that way), and /proc/self names the thread group
// leader's. Trees captured before thread-self was read fall back to self.
func (r *reader) ownNetNS() uint64 {
	if r.fs.Exists("/proc/thread-self/ns/net") {
		return r.netnsOf("/proc/thread-self/ns/net")
	}
	return r.netnsOf("/proc/self/ns/net")
}

func (r *reader) netnsOf(link string) uint64 {
	target, err := r.fs.Readlink(link)
	if err != nil {
		if !isAbsent(err) {
			r.fail(permissionHint(err))
		}
		return 0
	}
	ino, err := parseNSLink(target)
	if err != nil {
		r.fail(&ParseError{Path: link, Err: err})
	}
	return ino
}

func parseNSLink(target string) (uint64, error) {
	_, rest, ok := strings.Cut(target, ":[")
	if !ok || !strings.HasSuffix(rest, "]") {
		return 0, fmt.Errorf("namespace link %q is not TYPE:[INODE]", target)
	}
	return strconv.ParseUint(strings.TrimSuffix(rest, "]"), 10, 64)
}

// readProcNet finds the process's network namespace, its listening
// sockets and, when the namespace is not the inspector's, that
// namespace's sysctls and counters. The listeners (and another
// namespace's sockets) come from finish, once the fd scan and dumps
// started here are done; finish must be called before the Read ends (it
// closes the namespaces' sockets). Its error is kernel.ErrProcessGone.
func readProcNet(r *reader, p *Process) (finish func(*Process) error, err error) {
	p.NetNS = r.netnsOf(fmt.Sprintf("/proc/%d/ns/net", p.PID))
	p.NetNSIsInspector = p.NetNS != 0 && p.NetNS == r.selfNetNS
	if p.NetNSIsInspector {
		// the sockets of its ports come once all listeners are known
		// (readTCPProbe), from a dump filtered on them
		scan := startListenersHeld(r, p.PID, r.selfListeners())
		return func(p *Process) (err error) {
			if p.Listen, err = scan.wait(r); err == nil {
				p.ListenNICs = listenNICs(r.snap, p)
			}
			return err
		}, nil
	}
	dir := fmt.Sprintf("/proc/%d/net", p.PID)
	if p.NetNS != 0 {
		p.NetNSName = r.netnsName(p.NetNS)
	}
	if p.NetNS == 0 { // namespace unknown (not root): its tables, for the listeners
		socks, _ := r.tcpTables(0, dir)
		p.Listen, err = startListenersHeld(r, p.PID, socks).wait(r)
		return nil, err
	}
	sockets, err := startOtherNetns(r, p, dir)
	if err != nil {
		return nil, err
	}
	p.NetSysctls = readNetnsSysctls(r, p.PID, p.NetNS)
	net := &NetStats{}
	if net.TcpExt, err = readNetstat(r, dir+"/netstat"); err != nil {
		r.fail(err)
	}
	if net.Sockstat, err = readSockstat(r, dir); err != nil {
		r.fail(err)
	}
	p.Net = net
	return func(p *Process) (err error) {
		p.Net.TCP, err = sockets(p)
		return err
	}, nil
}

// startOtherNetns starts finding the listeners of a process in another
// network namespace and summarising the sockets of their ports; sockets
// (which sets p.Listen) waits for them. They come through sock_diag
// inside the namespace (its listeners, then, while the fd scan runs, the
// sockets of every port it listens on, filtered in the kernel and then
// here to the process's; Scope "ports"), else from /proc/PID/net/tcp and
// tcp6 (every socket). Source says which, and why not sock_diag. The
// error is kernel.ErrProcessGone.
func startOtherNetns(r *reader, p *Process, dir string) (sockets func(*Process) (*TCPSummary, error), err error) {
	listen, diagErr := r.nsListeners(p.PID, p.NetNS)
	var socks []tcpSocket
	if diagErr != nil {
		var found bool
		if socks, found = r.tcpTables(p.NetNS, dir); !found && r.fs.live {
			// no namespace and no tables: the process may have ended
			if err := kernel.GoneIfZombie(r.fs.Path(fmt.Sprintf("/proc/%d/fd", p.PID))); errors.Is(err, kernel.ErrProcessGone) {
				return nil, err
			}
		}
		listen = socks
	}
	scan := startListenersHeld(r, p.PID, listen)
	var cand *nsDump // a container's namespace holds its Redis's listeners and few others
	listenersDumped := diagErr == nil
	if listenersDumped {
		cand = r.startNSPortSockets(p.PID, p.NetNS, listenPorts(listen))
	}
	return func(p *Process) (*TCPSummary, error) {
		var err error
		if p.Listen, err = scan.wait(r); err != nil {
			if cand != nil {
				<-cand.done // the namespace's socket is closed at the end of Read
			}
			return nil, err
		}
		var ports []int
		for _, l := range p.Listen {
			ports = append(ports, l.Port)
		}
		if listenersDumped {
			socks, diagErr = cand.sockets(r, listen, ports)
			if diagErr != nil && !r.fs.live {
				// a tree captured before the dump was named after every
				// port the namespace listens on has it under the
				// process's ports
				if old, err := r.nsPortSockets(p.PID, p.NetNS, listen, ports); err == nil {
					socks, diagErr = old, nil
				}
			}
			if diagErr == nil {
				sum := summarizeTCP(socks, ports)
				sum.Scope, sum.Source = "ports", "sock_diag"
				return sum, nil
			}
			socks, _ = r.tcpTables(p.NetNS, dir) // the port dump failed
		}
		sum := summarizeTCP(socks, ports)
		sum.Source = fmt.Sprintf("%s/tcp, tcp6 (%v)", dir, diagErr)
		return sum, nil
	}, nil
}

// listeningSockets keeps the LISTEN sockets whose inode the process holds.
func listeningSockets(socks []tcpSocket, inodes map[uint64]bool) []ListenSocket {
	var out []ListenSocket
	for _, s := range socks {
		if s.state == tcpListen && inodes[s.inode] {
			out = append(out, ListenSocket{Family: s.family, Addr: formatHexAddr(s.local), Port: s.localPort, Inode: s.inode})
		}
	}
	slices.SortFunc(out, func(a, b ListenSocket) int {
		if a.Port != b.Port {
			return a.Port - b.Port
		}
		return strings.Compare(a.Family+a.Addr, b.Family+b.Addr)
	})
	return out
}

// Process returns the process with the given pid, or nil.
func (s *Snapshot) Process(pid int) *Process {
	for i := range s.Processes {
		if s.Processes[i].PID == pid {
			return &s.Processes[i]
		}
	}
	return nil
}

// MainThread returns the process's main thread (tid == pid), or nil.
func (p *Process) MainThread() *Thread {
	for i := range p.Threads {
		if p.Threads[i].TID == p.PID {
			return &p.Threads[i]
		}
	}
	return nil
}

// refusedError is a process whose threads the kernel refused to list.
type refusedError struct {
	pid  int
	comm string
	err  error
}

func (e *refusedError) Error() string {
	return fmt.Sprintf("%s pid %d: %v (run redline as root to read it): it is left out of the snapshot, and placement cannot keep off its CPUs", e.comm, e.pid, e.err)
}

func (e *refusedError) Unwrap() error { return e.err }
