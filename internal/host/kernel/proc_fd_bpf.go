package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Reading 19,000 fd links of a busy Redis costs the kernel about 3 µs
// each (a syscall, a path lookup, the link's text). A BPF iterator of type
// task_file (kernel/bpf/task_iter.c) walks one process's fd table in the
// kernel instead and runs a small program per open file; the program
// here writes (fd, inode) for each socket into the iterator's stream, 16
// bytes a socket, read in large reads. It needs root (CAP_BPF and
// CAP_PERFMON), BTF (/sys/kernel/btf/vmlinux) and Linux 6.1 or later
// (the pid filter, union bpf_iter_link_info.task); where any of that is
// missing the readlink scan runs, and the reason is remembered so that
// the iterator is not tried again in the process (fdIterErr; a failure
// that may pass, such as EMFILE, falls back for that scan only).
//
// The program is loaded once per process and shared by every scan (the
// kernel holds a reference per link); each scan makes its own link and
// iterator, closed when it ends.
//
// github.com/cilium/ebpf could assemble and load it, but not make the
// pid-filtered link, and its loader indexes the whole kernel BTF twice:
// 45-75 ms of CPU at the first load against 4-13 here, for 223 fewer
// lines of code (measured in docs/benchmarks.md, issue 23 item 5).

// fdIter is this process's iterator program, or why it is not used.
var fdIter struct {
	mu   sync.Mutex
	prog int   // the loaded program's fd; 0 before the first load
	err  error // set once: the iterator is not tried again
}

// fdIterAttachID, when nonzero (tests), replaces the BTF id the program
// attaches to.
var fdIterAttachID uint32

// fdIterErr returns why the fd iterator is not used in this process: nil
// while it works or before it was first needed.
func fdIterErr() error {
	fdIter.mu.Lock()
	defer fdIter.mu.Unlock()
	return fdIter.err
}

// fdIterProg returns the program, loading it on first use.
func fdIterProg() (int, error) {
	fdIter.mu.Lock()
	defer fdIter.mu.Unlock()
	if fdIter.err == nil && fdIter.prog == 0 {
		fdIter.prog, fdIter.err = loadFDIterProg()
	}
	return fdIter.prog, fdIter.err
}

// fdIterFailed keeps the first failure; the program fd stays open, as
// another scan may be using it.
func fdIterFailed(err error) {
	fdIter.mu.Lock()
	defer fdIter.mu.Unlock()
	if fdIter.err == nil {
		fdIter.err = err
	}
}

// loadFDIterProg reads the kernel's BTF and loads the program.
func loadFDIterProg() (int, error) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		return 0, errors.New("fd iterator: the bpf_attr layouts here are those of 64-bit builds")
	}
	// The kernel resolves the pid filter in the pid namespace of the task
	// that creates the iterator (init_seq_pidns: task_active_pid_ns of
	// current), this process's; the pids come from /proc, so /proc must be
	// that namespace's too.
	if self, err := os.Readlink("/proc/self"); err != nil || self != strconv.Itoa(os.Getpid()) {
		return 0, fmt.Errorf("fd iterator: /proc is not this process's pid namespace's (/proc/self is %q, %v)", self, err)
	}
	if !bpfTracingCapable() { // spares the BTF parse a load that would fail
		return 0, errors.New("fd iterator: needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN")
	}
	btf, err := readFDIterBTF()
	if err != nil {
		return 0, fmt.Errorf("fd iterator: %w", err)
	}
	if fdIterAttachID != 0 {
		btf.attachID = fdIterAttachID
	}
	return bpfProgLoad(fdIterProgram(btf), btf.attachID)
}

// bpfTracingCapable says whether this process may load a tracing
// program (kernel/bpf/syscall.c: bpf_capable and perfmon_capable).
func bpfTracingCapable() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	has := func(c uint) bool { return data[c/32].Effective&(1<<(c%32)) != 0 }
	return has(unix.CAP_SYS_ADMIN) || has(unix.CAP_BPF) && has(unix.CAP_PERFMON)
}

// bpfInsn is one BPF instruction (struct bpf_insn): the destination
// register in the low 4 bits of regs, the source in the high.
type bpfInsn struct {
	code uint8
	regs uint8
	off  int16
	imm  int32
}

// Instruction codes (include/uapi/linux/bpf.h, bpf_common.h): class |
// size or operation | source.
const (
	bpfLdxDW = 0x79 // BPF_LDX | BPF_MEM | BPF_DW
	bpfLdxW  = 0x61
	bpfLdxH  = 0x69
	bpfStxDW = 0x7b // BPF_STX | BPF_MEM | BPF_DW
	bpfMovX  = 0xbf // BPF_ALU64 | BPF_MOV | BPF_X
	bpfMovK  = 0xb7
	bpfAndK  = 0x57
	bpfAddK  = 0x07
	bpfJeqK  = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfJneK  = 0x55
	bpfJneX  = 0x5d
	bpfCall  = 0x85
	bpfExit  = 0x95

	bpfFuncSeqWrite = 127        // BPF_FUNC_seq_write
	sockfsMagic     = 0x534F434B // SOCKFS_MAGIC, include/uapi/linux/magic.h
	bpfOut          = -1         // a jump's offset, to the program's "return 0"
)

// ins is an instruction from its fields in the order the kernel's
// BPF_RAW_INSN macro takes them.
func ins(code, dst, src uint8, off int16, imm int32) bpfInsn {
	return bpfInsn{code: code, regs: dst | src<<4, off: off, imm: imm}
}

// fdIterProgram is, in C:
//
//	int prog(struct bpf_iter__task_file *ctx) {
//		struct file *file = ctx->file;
//		struct task_struct *task = ctx->task;
//		if (!file || !task || task->group_leader != task) return 0;
//		struct inode *inode = file->f_inode;
//		if (!inode || (inode->i_mode & S_IFMT) != S_IFSOCK) return 0;
//		if (!inode->i_sb || inode->i_sb->s_magic != SOCKFS_MAGIC) return 0;
//		u64 rec[2] = {ctx->fd, inode->i_ino};
//		bpf_seq_write(ctx->meta->seq, rec, 16);
//		return 0;
//	}
//
// Only the thread group leader's table is written: /proc/PID/fd shows
// the leader's, and the kernel walks a thread with a table of its own
// (no CLONE_FILES) too. A socket file on disk opened with O_PATH has an
// S_IFSOCK inode too, of its own file system: its link is the path, and
// its number could equal a socket's. ctx is struct bpf_iter__task_file: meta at 0,
// task at 8, fd (u32, 8-aligned) at 16, file at 24; file is NULL in the
// last call, when the walk ends.
func fdIterProgram(t fdIterBTF) []bpfInsn {
	ldIno := uint8(bpfLdxDW)
	if t.inoSize == 4 {
		ldIno = bpfLdxW
	}
	p := []bpfInsn{
		ins(bpfMovX, 6, 1, 0, 0),                // r6 = ctx
		ins(bpfLdxDW, 2, 6, 24, 0),              // r2 = ctx->file
		ins(bpfJeqK, 2, 0, bpfOut, 0),           //
		ins(bpfLdxDW, 7, 6, 8, 0),               // r7 = ctx->task
		ins(bpfJeqK, 7, 0, bpfOut, 0),           //
		ins(bpfLdxDW, 8, 7, t.groupLeader, 0),   // r8 = task->group_leader
		ins(bpfJneX, 8, 7, bpfOut, 0),           //
		ins(bpfLdxDW, 3, 2, t.fileInode, 0),     // r3 = file->f_inode
		ins(bpfJeqK, 3, 0, bpfOut, 0),           //
		ins(bpfLdxH, 4, 3, t.inodeMode, 0),      // r4 = inode->i_mode & S_IFMT
		ins(bpfAndK, 4, 0, 0, 0o170000),         //
		ins(bpfJneK, 4, 0, bpfOut, 0o140000),    // S_IFSOCK
		ins(bpfLdxDW, 9, 3, t.inodeSB, 0),       // r9 = inode->i_sb
		ins(bpfJeqK, 9, 0, bpfOut, 0),           //
		ins(bpfLdxDW, 9, 9, t.sbMagic, 0),       // r9 = sb->s_magic
		ins(bpfJneK, 9, 0, bpfOut, sockfsMagic), //
		ins(ldIno, 5, 3, t.inodeIno, 0),         // rec[1] = inode->i_ino
		ins(bpfStxDW, 10, 5, -8, 0),             //
		ins(bpfLdxW, 5, 6, 16, 0),               // rec[0] = ctx->fd
		ins(bpfStxDW, 10, 5, -16, 0),            //
		ins(bpfLdxDW, 1, 6, 0, 0),               // r1 = ctx->meta->seq
		ins(bpfLdxDW, 1, 1, 0, 0),               //
		ins(bpfMovX, 2, 10, 0, 0),               // r2 = rec
		ins(bpfAddK, 2, 0, 0, -16),              //
		ins(bpfMovK, 3, 0, 0, 16),               // r3 = sizeof rec
		ins(bpfCall, 0, 0, 0, bpfFuncSeqWrite),  //
		ins(bpfMovK, 0, 0, 0, 0),                // out: return 0
		ins(bpfExit, 0, 0, 0, 0),                //
	}
	out := len(p) - 2
	for i := range p {
		if p[i].off == bpfOut && p[i].code&0x07 == 0x05 { // BPF_JMP class
			p[i].off = int16(out - i - 1)
		}
	}
	return p
}

// bpfProgLoadAttr is union bpf_attr for BPF_PROG_LOAD, to attach_prog_fd.
type bpfProgLoadAttr struct {
	progType           uint32
	insnCnt            uint32
	insns              unsafe.Pointer
	license            unsafe.Pointer
	logLevel           uint32
	logSize            uint32
	logBuf             unsafe.Pointer
	kernVersion        uint32
	progFlags          uint32
	progName           [16]byte
	progIfindex        uint32
	expectedAttachType uint32
	progBTFFd          uint32
	funcInfoRecSize    uint32
	funcInfo           uint64
	funcInfoCnt        uint32
	lineInfoRecSize    uint32
	lineInfo           uint64
	lineInfoCnt        uint32
	attachBTFID        uint32
	attachProgFd       uint32
	_                  uint32
}

// bpfLinkCreateAttr is union bpf_attr for BPF_LINK_CREATE of an iterator.
type bpfLinkCreateAttr struct {
	progFd      uint32
	targetFd    uint32
	attachType  uint32
	flags       uint32
	iterInfo    unsafe.Pointer // union bpf_iter_link_info
	iterInfoLen uint32
	_           uint32
}

// bpfIterLinkInfo is union bpf_iter_link_info as its task member (the
// union is 16 bytes: its cgroup member).
type bpfIterLinkInfo struct {
	tid, pid, pidFd uint32
	_               uint32
}

// bpf makes the bpf(2) call cmd with attr. The verifier gives up with
// EAGAIN when a signal is pending, and the Go runtime signals its threads
// to preempt goroutines: a load is tried up to 5 times, as libbpf does.
func bpf(cmd uintptr, attr unsafe.Pointer, size uintptr) (int, error) {
	for try := 1; ; try++ {
		fd, _, e := unix.Syscall(unix.SYS_BPF, cmd, uintptr(attr), size)
		switch {
		case e == 0:
			return int(fd), nil
		case e == unix.EINTR || e == unix.EAGAIN && cmd == unix.BPF_PROG_LOAD && try < 5:
			continue
		default:
			return -1, e
		}
	}
}

// bpfProgLoad loads the program as a task_file iterator. The license is
// GPL because bpf_seq_write is a GPL-only helper (the verifier refuses
// it to other programs). A refused program is loaded again with the
// verifier's log, for the error.
func bpfProgLoad(prog []bpfInsn, attachID uint32) (int, error) {
	license := []byte("GPL\x00")
	var log []byte
	for level := uint32(0); ; level++ {
		attr := bpfProgLoadAttr{
			progType: unix.BPF_PROG_TYPE_TRACING, insnCnt: uint32(len(prog)),
			insns: unsafe.Pointer(&prog[0]), license: unsafe.Pointer(&license[0]),
			expectedAttachType: unix.BPF_TRACE_ITER, attachBTFID: attachID,
		}
		copy(attr.progName[:], "redline_fds")
		if level > 0 {
			log = make([]byte, 64<<10)
			attr.logLevel, attr.logSize, attr.logBuf = 1, uint32(len(log)), unsafe.Pointer(&log[0])
		}
		fd, err := bpf(unix.BPF_PROG_LOAD, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
		runtime.KeepAlive(prog)
		runtime.KeepAlive(license)
		if err == nil || level > 0 {
			if err != nil {
				return 0, fmt.Errorf("fd iterator: load the program: %w; verifier: %s", err, verifierLog(log))
			}
			return fd, nil
		}
		if err != unix.EACCES && err != unix.EINVAL {
			return 0, fmt.Errorf("fd iterator: load the program: %w", err)
		}
	}
}

// verifierLog returns the end of the verifier's log: where it stopped.
func verifierLog(log []byte) string {
	if i := strings.IndexByte(string(log), 0); i >= 0 {
		log = log[:i]
	}
	s := strings.TrimSpace(string(log))
	if len(s) > 1000 {
		s = "..." + s[len(s)-1000:]
	}
	return strings.ReplaceAll(s, "\n", "; ")
}

// fdIterOpen makes the link (the program, walking pid's files only: by
// pidfd when there is one, so that a pid reused since the scan began is
// not walked) and the iterator to read; done closes both.
func fdIterOpen(prog, pid, pidfd int) (iter int, done func(), err error) {
	info := bpfIterLinkInfo{pid: uint32(pid)}
	if pidfd > 0 { // the kernel takes one of tid, pid and pid_fd
		info = bpfIterLinkInfo{pidFd: uint32(pidfd)}
	}
	attr := bpfLinkCreateAttr{
		progFd: uint32(prog), attachType: unix.BPF_TRACE_ITER,
		iterInfo: unsafe.Pointer(&info), iterInfoLen: uint32(unsafe.Sizeof(info)),
	}
	link, err := bpf(unix.BPF_LINK_CREATE, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	runtime.KeepAlive(&info)
	if err != nil {
		return 0, nil, &iterLinkError{fmt.Errorf("fd iterator: link for pid %d: %w", pid, err)}
	}
	iterAttr := struct{ linkFd, flags uint32 }{linkFd: uint32(link)}
	iter, err = bpf(unix.BPF_ITER_CREATE, unsafe.Pointer(&iterAttr), unsafe.Sizeof(iterAttr))
	if err != nil {
		unix.Close(link)
		return 0, nil, fmt.Errorf("fd iterator: iterator for pid %d: %w", pid, err)
	}
	return iter, func() { unix.Close(iter); unix.Close(link) }, nil
}

// fdIterSockets calls visit with the fd and inode of each socket process
// pid (pidfd, when above 0) holds, in fd order, until visit returns true.
// A process that has ended gives no sockets (the caller tells it gone).
func fdIterSockets(pid, pidfd int, visit func(fd int, ino uint64) (stop bool)) error {
	prog, err := fdIterProg()
	if err != nil {
		return err
	}
	iter, closeIter, err := fdIterOpen(prog, pid, pidfd)
	if err != nil {
		return err
	}
	defer closeIter()
	buf := make([]byte, 64<<10) // the kernel's seq buffer is 8 pages: 2,048 sockets a read with 4 KiB pages
	have := 0
	for {
		n, err := unix.Read(iter, buf[have:])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return fmt.Errorf("fd iterator: read pid %d: %w", pid, err)
		case n == 0:
			return nil
		}
		have += n
		recs := have &^ 15
		for off := 0; off < recs; off += 16 {
			fd := binary.NativeEndian.Uint64(buf[off:])
			if visit(int(fd), binary.NativeEndian.Uint64(buf[off+8:])) {
				return nil
			}
		}
		have = copy(buf, buf[recs:have]) // a record split between reads
	}
}

// iterLinkError is a refused link: the kernel's answer (EINVAL, E2BIG
// before 6.1, EPERM) does not change within the process.
type iterLinkError struct{ error }

func (e *iterLinkError) Unwrap() error { return e.error }

// iterLasting says whether err, an fdIterSockets failure, will recur in
// this process: a refused load (fdIterProg keeps those itself) or a
// refused link; not EMFILE, ENOMEM, EAGAIN or a read cut short.
func iterLasting(err error) bool {
	var link *iterLinkError
	return errors.As(err, &link) && !errors.Is(err, unix.EMFILE) && !errors.Is(err, unix.ENFILE) &&
		!errors.Is(err, unix.ENOMEM) && !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.ESRCH)
}

// fdDirPID returns the pid of a live /proc/PID/fd directory.
func fdDirPID(dir string) (int, bool) {
	rest, ok := strings.CutPrefix(dir, "/proc/")
	if !ok {
		return 0, false
	}
	rest, ok = strings.CutSuffix(rest, "/fd")
	pid, err := strconv.Atoi(rest)
	return pid, ok && err == nil && pid > 0
}

// FDIterator loads the fd iterator's program if it is not loaded yet and
// returns why the iterator is not used in this process (nil: it is).
func FDIterator() error {
	_, err := fdIterProg()
	return err
}
