package host

import (
	"bytes"
	"errors"
	iofs "io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultRedisComms are the process names Read takes for Redis servers
// when Options.PIDs is empty.
var DefaultRedisComms = []string{"redis-server", "valkey-server", "keydb-server"}

// DefaultPorts are the TCP ports whose sockets Read always counts (for the
// port-range rule on client hosts), besides the Redis listening ports.
var DefaultPorts = []int{6379}

// Options says what Read looks at beyond the host itself.
type Options struct {
	// PIDs are the Redis processes to describe. Empty means every process
	// whose comm is one of Comms.
	PIDs []int
	// Comms are the process names to detect (default DefaultRedisComms).
	Comms []string
	// NoProcesses skips processes altogether.
	NoProcesses bool
	// IRQPatterns are extra queue-to-IRQ rules in oeAware's syntax,
	// tried before the built-in conventions:
	// "REGEXP:VAR_ETH_qpVAR_QUEUE" (see ParseIRQPattern).
	IRQPatterns []string
	// Ports are extra TCP ports to count sockets for (default
	// DefaultPorts).
	Ports []int
	// Now stamps live snapshots (default time.Now).
	Now func() time.Time
}

// probe reads one part of the snapshot. A probe's error is recorded in
// Snapshot.Errors under the probe's name; the other probes still run.
type probe struct {
	name string
	run  func(*reader) error
}

// probes run in this order: later ones use what earlier ones found (CPUs
// need the NUMA nodes, NIC queue mapping needs the interrupts, processes
// need the TCP tables).
var probes = []probe{
	{"kernel", readKernel},
	{"cpuinfo", readCPUInfo},
	{"numa", readNUMA},
	{"cpu", readCPUs},
	{"cpufreq", readCPUFreq},
	{"cpuidle", readCPUIdle},
	{"stat", readStat},
	{"clocksource", readClocksource},
	{"virtualization", readVirtualization},
	{"container", readContainer},
	{"interrupts", readInterrupts},
	{"irq", readIRQSettings},
	{"irqbalance", readIrqbalance},
	{"nics", readNICs},
	{"addresses", readNICAddrs},
	{"ethtool", readEthtool},
	{"sysctls", readSysctls},
	{"thp", readTHP},
	{"meminfo", readMeminfo},
	{"vmstat", readVMStat},
	{"softnet_stat", readSoftnet},
	{"softirqs", readSoftirqs},
	{"netstat", readNetstatProbe},
	{"sockstat", readSockstatProbe},
	{"processes", readProcesses},
	{"tcp", readTCPProbe},
}

// Read builds a Snapshot of the host behind fs. It returns an error only
// when it cannot start; every failure after that is recorded in
// Snapshot.Errors and the rest of the snapshot is still produced.
func Read(fs *FS, opts Options) (*Snapshot, error) {
	r := newReader(fs, opts)
	defer r.closeNSDiags()
	// the sockets of Options.Ports (on a busy Redis host, most of the
	// kernel's work) are dumped beside every probe before "tcp"
	r.predumpPorts()
	for _, p := range probes {
		r.source = p.name
		if err := p.run(r); err != nil {
			r.fail(err)
		}
	}
	return r.snap, nil
}

// reader carries one Read's state.
type reader struct {
	fs     *FS
	opts   Options
	snap   *Snapshot
	source string // the running probe, for errors

	nodeOf     map[int]int // CPU -> NUMA node
	hypervisor bool        // the cpuinfo flag
	procs      []procEntry // the process scan, once
	scanned    bool
	selfNetNS  uint64 // the inspector's network namespace inode (0: unknown)
	mountinfo  []mount
	tcpCache   map[string]tcpTable
	listeners  *[]tcpSocket       // the inspector's namespace's, once read (sock_diag.go)
	predump    *portsPredump      // the sockets of Options.Ports, dumped while fd scans ran
	netnsNames map[uint64]string  // named namespaces by inode (servers.go)
	nsDiags    map[uint64]*nsDiag // other namespaces' sock_diag sockets (sock_diag_netns.go)
	nsDumps    map[string]*nsDump // their dumps by virtual path: two servers of a namespace share one
	nsSysctls  map[uint64]Sysctls // their net.* sysctls by inode, read once (netns.go)
	addrs      *addrTable         // the live machine's addresses, dumped once (net_addr.go)
	memo       map[string]memoFile
}

func newReader(fs *FS, opts Options) *reader {
	if len(opts.Comms) == 0 {
		opts.Comms = DefaultRedisComms
	}
	if opts.Ports == nil {
		opts.Ports = DefaultPorts
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Snapshot{Schema: SchemaVersion, Sysctls: Sysctls{}, NICs: []NIC{}, Processes: []Process{}}
	s.Source = Source{Root: fs.root, Live: fs.live, AsRoot: fs.live && os.Geteuid() == 0}
	if fs.proc != joinRoot(fs.root, "proc") {
		s.Source.Proc = fs.proc
	}
	if fs.sys != joinRoot(fs.root, "sys") {
		s.Source.Sys = fs.sys
	}
	if fs.live {
		t := opts.Now().UTC()
		s.Source.Time = &t
	}
	return &reader{fs: fs, opts: opts, snap: s, nodeOf: map[int]int{}, tcpCache: map[string]tcpTable{}, nsDiags: map[uint64]*nsDiag{}, nsDumps: map[string]*nsDump{}, nsSysctls: map[uint64]Sysctls{}, memo: map[string]memoFile{}}
}

func joinRoot(root, dir string) string {
	if root == "/" {
		return "/" + dir
	}
	return root + "/" + dir
}

// fail records err under the running probe's name.
func (r *reader) fail(err error) {
	r.failAs(r.source, err)
}

func (r *reader) failAs(source string, err error) {
	r.snap.Errors = append(r.snap.Errors, sourceError(source, err))
}

// file reads a file that may legitimately be missing: absent (or listed
// but refused by the kernel) gives ok=false and no error; any other failure
// is recorded and gives ok=false.
//
// Files are read once per snapshot: two Redis processes in one cgroup
// share its files, and the second asks the memo.
func (r *reader) file(path string) ([]byte, bool) {
	if m, ok := r.memo[path]; ok {
		return m.data, m.ok
	}
	data, err := r.fs.ReadFile(path)
	ok := err == nil
	if !ok {
		data = nil
		if !isAbsent(err) && !isUnsupported(err) {
			r.fail(permissionHint(err))
		}
	}
	r.memo[path] = memoFile{data, ok, err != nil && errors.Is(err, iofs.ErrPermission)}
	return data, ok
}

// memoFile is one remembered read; refused when the kernel said
// permission denied.
type memoFile struct {
	data    []byte
	ok      bool
	refused bool
}

// refused reports whether reading path (already read with file) was
// refused for permission.
func (r *reader) refused(path string) bool {
	return r.memo[path].refused
}

// str reads a one-line file, trimmed.
func (r *reader) str(path string) (string, bool) {
	data, ok := r.file(path)
	if !ok {
		return "", false
	}
	return string(bytes.TrimSpace(data)), true
}

// int64 reads a file holding one integer; a malformed value is recorded.
func (r *reader) int64(path string) (*int64, bool) {
	s, ok := r.str(path)
	if !ok {
		return nil, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		r.fail(&ParseError{Path: path, Line: 1, Err: err})
		return nil, false
	}
	return &v, true
}

// int reads a file holding one int.
func (r *reader) int(path string) (*int, bool) {
	v, ok := r.int64(path)
	if !ok {
		return nil, false
	}
	n := int(*v)
	return &n, true
}

// cpuList reads a cpulist file.
func (r *reader) cpuList(path string) (*CPUSet, bool) {
	s, ok := r.str(path)
	if !ok {
		return nil, false
	}
	set, err := ParseCPUList(s)
	if err != nil {
		r.fail(&ParseError{Path: path, Line: 1, Err: err})
		return nil, false
	}
	return &set, true
}

// cpuMask reads a hex cpumask file.
func (r *reader) cpuMask(path string) (*CPUSet, bool) {
	s, ok := r.str(path)
	if !ok {
		return nil, false
	}
	set, err := ParseCPUMask(s)
	if err != nil {
		r.fail(&ParseError{Path: path, Line: 1, Err: err})
		return nil, false
	}
	return &set, true
}

// dir lists a directory that may be missing.
func (r *reader) dir(path string) []DirEntry {
	ents, err := r.fs.ReadDir(path)
	if err != nil && !isAbsent(err) {
		r.fail(permissionHint(err))
	}
	return ents
}

// numbered returns the numbers N of the entries named prefix+N, ascending.
func numbered(ents []DirEntry, prefix string) []int {
	var out []int
	for _, e := range ents {
		if n, ok := strings.CutPrefix(e.Name, prefix); ok {
			if v, err := strconv.Atoi(n); err == nil && v >= 0 {
				out = append(out, v)
			}
		}
	}
	slices.Sort(out)
	return out
}

func intPtr(v int) *int { return &v }

func u64Ptr(v uint64) *uint64 { return &v }
