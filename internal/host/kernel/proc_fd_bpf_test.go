package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"redline/internal/testutil"
	"redline/internal/testutil/fdtest"
)

// needFDIter skips t where the task_file iterator cannot run (not root,
// no BTF) and fails it where it should but does not load.
func needFDIter(t testing.TB) {
	t.Helper()
	needBTF(t)
	if _, err := fdIterProg(); err != nil {
		t.Fatalf("root, and the kernel has BTF, but: %v", err)
	}
}

// needBTF skips t where the iterator cannot be tried: not root, or no
// kernel BTF.
func needBTF(t testing.TB) {
	t.Helper()
	testutil.NeedRoot(t)
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		t.Skipf("no kernel BTF: %v", err)
	}
}

// resetFDIter forgets the program and any failure, for a test that makes
// one; the next use loads the program again.
func resetFDIter() {
	fdIter.mu.Lock()
	defer fdIter.mu.Unlock()
	if fdIter.prog > 0 {
		unix.Close(fdIter.prog)
	}
	fdIter.prog, fdIter.err = 0, nil
}

// socketHolder starts a process holding, from fd 3: a TCP listener, then
// pairs sockets (both ends of unix socket pairs) with a pipe end after
// every tenth, and a closed fd after every hundredth. It returns the
// process and the listener's inode.
func socketHolder(t testing.TB, pairs int) (*exec.Cmd, uint64) {
	t.Helper()
	fdtest.RaiseNoFile(t, uint64(2*pairs+pairs/10+pairs/100+600))
	f, ino := fdtest.ListenerAt(t, "127.0.0.1:0", 300)
	dup, err := unix.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	files := []*os.File{os.NewFile(uintptr(dup), "listener"), socketFilePath(t)}
	for i := range pairs {
		pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, os.NewFile(uintptr(pair[0]), "a"), os.NewFile(uintptr(pair[1]), "b"))
		if i%10 == 0 {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			w.Close()
			files = append(files, r)
		}
		if i%100 == 0 {
			files = append(files, nil)
		}
	}
	return fdtest.HoldFiles(t, "", files), ino
}

// socketFilePath binds a unix socket to a path and opens that path with
// O_PATH: an S_IFSOCK inode of the file system, not a socket.
func socketFilePath(t testing.TB) *os.File {
	t.Helper()
	path := t.TempDir() + "/s.sock"
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fd), path)
}

// readlinkSockets is the reference: every socket link of pid's fds.
func readlinkSockets(t *testing.T, pid int) (sockets map[int]uint64, others int) {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	sockets = map[int]uint64{}
	for _, e := range ents {
		target, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		fd, _ := fdNumber([]byte(e.Name() + "\x00"))
		if ino, ok := ParseSocketLink([]byte(target)); ok {
			sockets[fd] = ino
		} else {
			others++
		}
	}
	return sockets, others
}

// heldBy returns which of the inodes process pid holds, scanning its fds
// with FDSockets until it has found them all.
func heldBy(pid int, inodes ...uint64) (map[uint64]bool, error) {
	held := map[uint64]bool{}
	err := Live{}.FDSockets(fmt.Sprintf("/proc/%d/fd", pid), func(ino uint64) bool {
		if slices.Contains(inodes, ino) {
			held[ino] = true
		}
		return len(held) == len(inodes)
	})
	return held, err
}

func iterSockets(t *testing.T, pid int) map[int]uint64 {
	t.Helper()
	got := map[int]uint64{}
	err := fdIterSockets(pid, -1, func(fd int, ino uint64) bool {
		if _, dup := got[fd]; dup {
			t.Errorf("fd %d reported twice", fd)
		}
		got[fd] = ino
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// The iterator reports exactly the sockets the fd links name, with their
// fds, and nothing else (pipes, stdin and the like are left out).
func TestFDIterMatchesReadlink(t *testing.T) {
	needFDIter(t)
	cmd, listener := socketHolder(t, 2000)
	want, others := readlinkSockets(t, cmd.Process.Pid)
	got := iterSockets(t, cmd.Process.Pid)
	if !maps.Equal(got, want) {
		t.Errorf("the iterator gave %d sockets, the links name %d; they differ", len(got), len(want))
		for fd, ino := range got {
			if want[fd] != ino {
				l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", cmd.Process.Pid, fd))
				t.Errorf("fd %d: iterator %d, link %q", fd, ino, l)
			}
		}
	}
	if got[3] != listener || len(want) < 4001 || others < 200 {
		t.Errorf("fd 3 is socket %d, want the listener %d; %d sockets and %d other fds", got[3], listener, len(want), others)
	}
}

// The scan of a large table stops where visit says; the iterator stops
// with it.
func TestFDIterStops(t *testing.T) {
	needFDIter(t)
	cmd, _ := socketHolder(t, 2000)
	calls := 0
	err := fdIterSockets(cmd.Process.Pid, -1, func(int, uint64) bool { calls++; return calls == 2500 })
	if err != nil || calls != 2500 {
		t.Errorf("visited %d sockets (%v), want 2500", calls, err)
	}
	seen := 0
	err = Live{}.FDSockets(fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid), func(uint64) bool { seen++; return seen == 3500 })
	if err != nil || seen != 3500 || fdIterErr() != nil {
		t.Errorf("visited %d sockets (%v, iterator: %v), want 3500", seen, err, fdIterErr())
	}
}

// Through a pidfd the iterator walks the same table as through the pid,
// and after the process is reaped and its pidfd names nothing, none: a
// pid reused meanwhile would not be walked.
func TestFDIterByPidfd(t *testing.T) {
	needFDIter(t)
	cmd, _ := socketHolder(t, 3000)
	pidfd, err := unix.PidfdOpen(cmd.Process.Pid, 0)
	if err != nil {
		t.Skipf("no pidfd here: %v", err)
	}
	defer unix.Close(pidfd)
	count := func(pid, pidfd int) int {
		n := 0
		if err := fdIterSockets(pid, pidfd, func(int, uint64) bool { n++; return false }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	byPid, byPidfd := count(cmd.Process.Pid, -1), count(cmd.Process.Pid, pidfd)
	if byPid < 6000 || byPidfd != byPid {
		t.Errorf("%d sockets by pid, %d by pidfd", byPid, byPidfd)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if n := count(cmd.Process.Pid, pidfd); n != 0 {
		t.Errorf("%d sockets of a reaped process", n)
	}
	if err := unix.PidfdSendSignal(pidfd, 0, nil, 0); err != unix.ESRCH {
		t.Errorf("signal 0 to the reaped process's pidfd: %v, want ESRCH (FDSockets' test that it ended)", err)
	}
}

// A pid with no process gives an empty stream, not an error (the caller
// tells a process that is gone from /proc); so does a process that ends
// while it is read, reaped or not: the kernel walks no further.
func TestFDIterProcessGone(t *testing.T) {
	needFDIter(t)
	if got := iterSockets(t, 1<<30); len(got) != 0 { // above any pid_max
		t.Errorf("pid %d: %d sockets", 1<<30, len(got))
	}
	for _, reap := range []bool{true, false} {
		cmd, _ := socketHolder(t, 4000) // more than one read of the iterator
		n := 0
		err := fdIterSockets(cmd.Process.Pid, -1, func(int, uint64) bool {
			if n++; n == 1 {
				cmd.Process.Kill()
				if reap {
					cmd.Wait()
				} else {
					waitZombie(t, cmd.Process.Pid)
				}
			}
			return false
		})
		if err != nil || n >= 8000 {
			t.Errorf("reaped %v: %d sockets after the kill, %v; want fewer than 8,000 and no error", reap, n, err)
		}
		_, err = heldBy(cmd.Process.Pid, 1<<62)
		if !errors.Is(err, ErrProcessGone) {
			t.Errorf("reaped %v: %v, want ErrProcessGone", reap, err)
		}
	}
}

func waitZombie(t *testing.T, pid int) {
	for { // the kill is sent: the state changes
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		if s := fdtest.StatState(stat); s == "Z" || s == "X" {
			return
		}
	}
}

// A program the kernel refuses (attached to a type that is not the
// iterator's function) leaves the readlink scan, which finds the
// listeners all the same; the failure is kept, and not retried.
func TestFDIterFallback(t *testing.T) {
	needFDIter(t)
	fdtest.RaiseNoFile(t, 6000)
	_, low := fdtest.ListenerAt(t, "127.0.0.1:0", 300)
	fdtest.FillFDs(t, 3000)
	_, high := fdtest.ListenerAt(t, "127.0.0.1:0", 4500)
	resetFDIter()
	fdIterAttachID = 1
	t.Cleanup(func() { fdIterAttachID = 0; resetFDIter() })

	held, err := heldBy(os.Getpid(), low, high, 1<<62)
	if err != nil || !held[low] || !held[high] || len(held) != 2 {
		t.Errorf("held %v, %v; want %d and %d", held, err, low, high)
	}
	failed := fdIterErr()
	if failed == nil || fdIter.prog != 0 {
		t.Fatalf("the iterator: %v (program fd %d), want a refusal", failed, fdIter.prog)
	}
	t.Logf("refused as expected: %v", failed)
	fdIterAttachID = 0 // would load now; the failure is kept
	if _, err := fdIterProg(); err != failed {
		t.Errorf("tried again: %v", err)
	}
}

func TestFDDirPID(t *testing.T) {
	for _, tc := range []struct {
		in  string
		pid int
		ok  bool
	}{
		{"/proc/4242/fd", 4242, true},
		{"/proc/self/fd", 0, false},
		{"/proc/0/fd", 0, false},
		{"/proc/4242/fdinfo", 0, false},
		{"/host/proc/4242/fd", 0, false},
	} {
		pid, ok := fdDirPID(tc.in)
		if pid != tc.pid && tc.ok || ok != tc.ok {
			t.Errorf("fdDirPID(%q) = %d, %v", tc.in, pid, ok)
		}
	}
}

// The program's jumps all land on its "return 0".
func TestFDIterProgramJumps(t *testing.T) {
	p := fdIterProgram(fdIterBTF{inoSize: 8})
	for i, in := range p {
		if in.code&0x07 == 0x05 && in.code != bpfCall && in.code != bpfExit && i+1+int(in.off) != len(p)-2 {
			t.Errorf("instruction %d jumps to %d", i, i+1+int(in.off))
		}
	}
}

// btfNames is the string section of the synthetic BTF below.
const btfNames = "\x00unsigned long\x00unsigned short\x00umode_t\x00inode\x00i_mode\x00i_ino\x00file\x00f_inode\x00" +
	"task_struct\x00group_leader\x00bpf_iter_task_file\x00i_sb\x00super_block\x00s_magic\x00" +
	"bpf_iter_link_info\x00map\x00task\x00"

func btfName(name string) uint32 {
	return uint32(strings.Index(btfNames, "\x00"+name+"\x00") + 1)
}

// btfBlob is raw BTF of the given type records (32-bit words each).
func btfBlob(strs string, types ...[]uint32) []byte {
	var typ []byte
	for _, words := range types {
		for _, w := range words {
			typ = binary.LittleEndian.AppendUint32(typ, w)
		}
	}
	hdr := []uint32{0x0001eb9f, 24, 0, uint32(len(typ)), uint32(len(typ)), uint32(len(strs))}
	var out []byte
	for _, w := range hdr {
		out = binary.LittleEndian.AppendUint32(out, w)
	}
	return append(append(out, typ...), strs...)
}

// btfTypesFor is the types the iterator needs; ino is i_ino's type id,
// mode i_mode's.
func btfTypesFor(ino, mode uint32) [][]uint32 {
	const kflag = 1 << 31
	n := btfName
	return [][]uint32{
		{n("unsigned long"), 1 << 24, 8, 64},  // 1
		{n("unsigned short"), 1 << 24, 2, 16}, // 2
		{n("umode_t"), 8 << 24, 2},            // 3 typedef
		{n("inode"), 4<<24 | 3, 24, n("i_mode"), mode, 0, n("i_ino"), ino, 64, n("i_sb"), 12, 128}, // 4
		{0, 2 << 24, 4}, // 5 *inode
		{n("file"), kflag | 4<<24 | 1, 16, n("f_inode"), 5, 64},      // 6 (bit offsets, kind_flag)
		{n("task_struct"), 4<<24 | 1, 16, n("group_leader"), 8, 128}, // 7
		{0, 2 << 24, 7},                        // 8 *task_struct
		{0, 13 << 24, 0},                       // 9 func proto
		{n("bpf_iter_task_file"), 12 << 24, 9}, // 10
		{n("super_block"), 4<<24 | 1, 16, n("s_magic"), 1, 64}, // 11
		{0, 2 << 24, 11}, // 12 *super_block
		{n("bpf_iter_link_info"), 5<<24 | 2, 16, n("map"), 1, 0, n("task"), 1, 0}, // 13 union
	}
}

func TestParseFDIterBTF(t *testing.T) {
	good := btfBlob(btfNames, btfTypesFor(1, 3)...)
	got, err := parseFDIterBTF(good)
	want := fdIterBTF{attachID: 10, fileInode: 8, inodeMode: 0, inodeIno: 8, inoSize: 8, inodeSB: 16, sbMagic: 8, groupLeader: 16}
	if err != nil || got != want {
		t.Errorf("got %+v, %v; want %+v", got, err, want)
	}
	loop := btfTypesFor(14, 3)
	loop = append(loop, []uint32{0, 8 << 24, 14}) // 14: a typedef of itself
	unknown := btfTypesFor(1, 3)
	unknown[0][1] = 25 << 24
	longVlen := btfTypesFor(1, 3)
	longVlen[9] = []uint32{0, 4<<24 | 500, 8} // members past the end
	for name, data := range map[string][]byte{
		"empty":           nil,
		"short header":    good[:10],
		"big-endian":      append([]byte{0xeb, 0x9f}, good[2:]...),
		"garbage":         []byte(strings.Repeat("\x9f\xeb\x01\x00\xff\xff\xff\xff", 8)),
		"unknown kind":    btfBlob(btfNames, unknown...),
		"vlen past end":   btfBlob(btfNames, longVlen...),
		"typedef loop":    btfBlob(btfNames, loop...),
		"no such type":    btfBlob(btfNames, btfTypesFor(99, 3)...),
		"i_mode size":     btfBlob(btfNames, btfTypesFor(1, 1)...),
		"names cut":       btfBlob(btfNames[:40], btfTypesFor(1, 3)...),
		"no iter func":    btfBlob(strings.Replace(btfNames, "bpf_iter_task_file", "bpf_iter_task_vma_", 1), btfTypesFor(1, 3)...),
		"no group_leader": btfBlob(strings.Replace(btfNames, "group_leader", "group_leadex", 1), btfTypesFor(1, 3)...),
		"no pid filter":   btfBlob(strings.Replace(btfNames, "\x00task\x00", "\x00tasx\x00", 1), btfTypesFor(1, 3)...),
	} {
		if got, err := parseFDIterBTF(data); err == nil {
			t.Errorf("%s: parsed as %+v", name, got)
		}
	}
	for n := range good { // every truncation errs; no read past the end
		if _, err := parseFDIterBTF(good[:n]); err == nil {
			t.Errorf("truncated to %d bytes: parsed", n)
		}
	}
	for i := range good { // any one byte changed: an error or a result, never a panic
		bad := slices.Clone(good)
		bad[i] ^= 0xff
		parseFDIterBTF(bad)
	}
}

// The running kernel's BTF has what the program needs.
func TestParseFDIterBTFLive(t *testing.T) {
	data, err := os.ReadFile("/sys/kernel/btf/vmlinux")
	if err != nil {
		t.Skipf("no kernel BTF: %v", err)
	}
	got, err := parseFDIterBTF(data)
	if err != nil || got.attachID == 0 || got.fileInode <= 0 || got.groupLeader <= 0 || got.inodeIno <= got.inodeMode {
		t.Errorf("vmlinux: %+v, %v", got, err)
	}
	t.Logf("vmlinux: %+v", got)
}

// BenchmarkFDIterLoad times the one-off work of the first large fd scan
// in a process: mapping and parsing the kernel's BTF (5.5 MB on the 6.18
// test VM), and loading the program (the verifier). "first" is the whole
// of it; alone in a fresh process with -benchtime 1x it is what a
// one-shot command pays.
//
//	go test ./internal/host/kernel -run XXX -bench FDIterLoad -benchtime 20x
func BenchmarkFDIterLoad(b *testing.B) {
	needBTF(b) // not the load itself: "first" in a fresh process is the first load
	b.Run("first", func(b *testing.B) {
		report := fdtest.ReportCPU(b)
		for b.Loop() {
			resetFDIter()
			if _, err := fdIterProg(); err != nil {
				b.Fatal(err)
			}
		}
		report()
	})
	var btf fdIterBTF
	b.Run("btf", func(b *testing.B) {
		report := fdtest.ReportCPU(b)
		for b.Loop() {
			var err error
			if btf, err = readFDIterBTF(); err != nil {
				b.Fatal(err)
			}
		}
		report()
	})
	b.Run("load", func(b *testing.B) {
		report := fdtest.ReportCPU(b)
		for b.Loop() {
			fd, err := bpfProgLoad(fdIterProgram(btf), btf.attachID)
			if err != nil {
				b.Fatal(err)
			}
			unix.Close(fd)
		}
		report()
	})
}

const fdIterNoCapsEnv = "REDLINE_TEST_FDITER_NOCAPS"

// Without the capabilities (root with an empty bounding set, as in a
// container that drops them) the iterator is not tried (no BTF parse):
// the readlink scan finds the process's listeners, and the reason is
// kept.
func TestFDIterNoPrivilege(t *testing.T) {
	if os.Getenv(fdIterNoCapsEnv) != "" {
		checkFDIterNoPrivilege(t)
		return
	}
	testutil.NeedRoot(t)
	testutil.Need(t, "setpriv")
	fdtest.RaiseNoFile(t, 6000) // the child inherits the limit
	cmd := exec.Command("setpriv", "--bounding-set=-all", "--inh-caps=-all",
		os.Args[0], "-test.run=^TestFDIterNoPrivilege$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), fdIterNoCapsEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestFDIterNoPrivilege") {
		t.Fatalf("without capabilities: %v\n%s", err, out)
	}
	t.Logf("without capabilities:\n%s", out)
}

func checkFDIterNoPrivilege(t *testing.T) {
	if bpfTracingCapable() {
		t.Fatal("capable of BPF tracing")
	}
	_, low := fdtest.ListenerAt(t, "127.0.0.1:0", 300)
	fdtest.FillFDs(t, 3000)
	_, high := fdtest.ListenerAt(t, "127.0.0.1:0", 4500)
	held, err := heldBy(os.Getpid(), low, high, 1<<62)
	if err != nil || !held[low] || !held[high] || len(held) != 2 {
		t.Errorf("held %v, %v; want %d and %d", held, err, low, high)
	}
	if err := fdIterErr(); err == nil || !strings.Contains(err.Error(), "CAP_BPF") {
		t.Errorf("the iterator: %v, want the missing capabilities", err)
	}
	t.Logf("not used: %v", fdIterErr())
}

// BenchmarkFDScan19k times the scan of a process holding 19,001 socket
// fds (a TCP listener and 9,500 unix socket pairs) for a listener it
// does not hold (every fd is read), by readlink (up to 4 workers) and by
// the iterator (its program loaded before the timing). cpu-ms/op is
// this process's CPU time.
//
//	go test ./internal/host/kernel -run XXX -bench FDScan19k -benchtime 20x
func BenchmarkFDScan19k(b *testing.B) {
	needFDIter(b)
	pid, ino := socketsChild(b, 9500)
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	for _, path := range []string{"readlink", "iterator"} {
		b.Run(path, func(b *testing.B) {
			live := Live{NoIterator: path == "readlink"}
			report := fdtest.ReportCPU(b)
			for b.Loop() {
				found := false
				err := live.FDSockets(dir, func(i uint64) bool { found = found || i == ino; return i == 1<<62 })
				if err != nil || !found {
					b.Fatalf("listener found %v, %v", found, err)
				}
			}
			report()
		})
	}
}

const fdHolderEnv = "REDLINE_TEST_FD_HOLDER"

// socketsChild starts this test binary as a process that opens a TCP
// listener and pairs unix socket pairs itself (passing 19,000 fds to a
// child needs twice as many here: exec moves them through fds above
// their count); it returns its pid and the listener's inode.
func socketsChild(b *testing.B, pairs int) (int, uint64) {
	fdtest.RaiseNoFile(b, uint64(2*pairs+200)) // the child inherits the limit
	cmd := exec.Command(os.Args[0], "-test.run=^TestFDHolderChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", fdHolderEnv, pairs))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); cmd.Wait() })
	var ino uint64
	if _, err := fmt.Fscan(out, &ino); err != nil {
		b.Fatalf("the holder: %v", err)
	}
	return cmd.Process.Pid, ino
}

// TestFDHolderChild is socketsChild's process: it prints the listener's
// inode once every socket is open, and holds them until stdin closes.
func TestFDHolderChild(t *testing.T) {
	var pairs int
	if _, err := fmt.Sscan(os.Getenv(fdHolderEnv), &pairs); err != nil {
		t.Skip("the holder of BenchmarkFDScan19k, run by it")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := ln.(*net.TCPListener).File()
	for range pairs {
		if _, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println(fdtest.FileInode(t, f))
	io.Copy(io.Discard, os.Stdin)
}

// FuzzParseFDIterBTF: hostile BTF gives an error or a result, never a
// panic or a read past the data.
func FuzzParseFDIterBTF(f *testing.F) {
	f.Add(btfBlob(btfNames, btfTypesFor(1, 3)...))
	f.Add(btfBlob(btfNames, append(btfTypesFor(14, 3), []uint32{0, 8 << 24, 14})...))
	f.Fuzz(func(t *testing.T, data []byte) {
		parseFDIterBTF(data)
	})
}

// A refused link keeps the iterator off for the process; running short of
// fds or memory, or a read cut short, falls back for that scan only.
func TestIterLasting(t *testing.T) {
	link := func(errno error) error { return &iterLinkError{fmt.Errorf("fd iterator: link for pid 1: %w", errno)} }
	for _, c := range []struct {
		err  error
		want bool
	}{
		{link(unix.EINVAL), true},
		{link(unix.E2BIG), true},
		{link(unix.EPERM), true},
		{link(unix.EMFILE), false},
		{link(unix.ENOMEM), false},
		{fmt.Errorf("fd iterator: read pid 1: %w", unix.EAGAIN), false},
		{fmt.Errorf("fd iterator: iterator for pid 1: %w", unix.EMFILE), false},
	} {
		if got := iterLasting(c.err); got != c.want {
			t.Errorf("iterLasting(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
