package host

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"redline/internal/host/kernel"
	"redline/internal/netns"
	"redline/internal/testutil"
	"redline/internal/testutil/fdtest"
)

// fdScanPaths runs test on each path of the live scan of a table larger
// than one getdents batch: readlink by workers, and the task_file
// iterator (skipped, with the reason, where it does not work).
func fdScanPaths(t *testing.T, fs *FS, test func(t *testing.T, iterator bool)) {
	t.Run("readlink", func(t *testing.T) {
		withLive(t, fs, func(l *kernel.Live) { l.NoIterator = true })
		test(t, false)
	})
	t.Run("iterator", func(t *testing.T) {
		needFDIter(t)
		test(t, true)
		if err := kernel.FDIterator(); err != nil {
			t.Errorf("the iterator failed: %v", err)
		}
	})
}

// needFDIter skips t where the task_file iterator cannot run (not root,
// no BTF) and fails it where it should but does not load.
func needFDIter(t testing.TB) {
	t.Helper()
	testutil.NeedRoot(t)
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		t.Skipf("no kernel BTF: %v", err)
	}
	if err := kernel.FDIterator(); err != nil {
		t.Fatalf("root, and the kernel has BTF, but: %v", err)
	}
}

// withLive sets the live kernel's test switches on fs for the test.
func withLive(t *testing.T, fs *FS, set func(*kernel.Live)) {
	old := fs.kernel
	l, _ := old.(kernel.Live)
	set(&l)
	fs.kernel = l
	t.Cleanup(func() { fs.kernel = old })
}

// withFDScanHook sets the live scan's hook on fs for the test.
func withFDScanHook(t *testing.T, fs *FS, hook func(fd string)) {
	withLive(t, fs, func(l *kernel.Live) { l.FDHook = hook })
}

func listenersOf(inodes ...uint64) []tcpSocket {
	var out []tcpSocket
	for _, ino := range inodes {
		out = append(out, tcpSocket{family: "tcp", state: tcpListen, inode: ino})
	}
	return out
}

// The scan finds a listener at any fd number (one opened late, after
// thousands of clients), reads every fd while a listener of the namespace
// is still unaccounted for, and stops at the fd that accounts for the
// last one. (The iterator reports, and the hook sees, sockets only.)
func TestLiveListenersHeldAtAnyFD(t *testing.T) {
	fs := liveFS(t)
	fs.recording = false // the live scan, as inspect runs it
	fdtest.RaiseNoFile(t, 6000)
	_, low := fdtest.ListenerAt(t, "127.0.0.1:0", 300)
	fdtest.FillFDs(t, 3000)
	_, high := fdtest.ListenerAt(t, "127.0.0.1:0", 4500)
	fdtest.SocketAt(t, 4501)  // right after the last listener
	const elsewhere = 1 << 62 // a listener of the namespace this process does not hold
	r := newReader(fs, Options{})
	fdScanPaths(t, fs, func(t *testing.T, iterator bool) {
		var read []string
		withFDScanHook(t, fs, func(fd string) { read = append(read, fd) })
		held, err := listenersHeld(r, os.Getpid(), listenersOf(low, high, elsewhere))
		if err != nil || !held[low] || !held[high] || len(held) != 2 {
			t.Fatalf("held %v, %v; want %d and %d", held, err, low, high)
		}
		if (len(read) < 3000 && !iterator) || !slices.Contains(read, "4501") {
			t.Errorf("read %d fds: want every fd, to 4501", len(read))
		}

		read = nil
		held, err = listenersHeld(r, os.Getpid(), listenersOf(low, high))
		if err != nil || len(held) != 2 {
			t.Fatalf("held %v, %v; want %d and %d", held, err, low, high)
		}
		if slices.Contains(read, "4501") {
			t.Errorf("the scan went on to fd 4501 after the last listener (fd 4500) was found")
		}
	})
}

// A listener closed during the readlink scan, before its fd is read (in
// the same getdents batch or a later one), is not reported, and the scan
// goes on. (The iterator reads a whole table of sockets in one go, up to
// 2,048 of them: a close meanwhile is after the fact.)
func TestLiveListenersHeldClosedMidScan(t *testing.T) {
	fs := liveFS(t)
	fs.recording = false
	withLive(t, fs, func(l *kernel.Live) { l.NoIterator = true })
	fdtest.RaiseNoFile(t, 6000)
	_, first := fdtest.ListenerAt(t, "127.0.0.1:0", 300)
	sameBatch, closedNear := fdtest.ListenerAt(t, "127.0.0.1:0", 600)
	fdtest.FillFDs(t, 3000)
	laterBatch, closedFar := fdtest.ListenerAt(t, "127.0.0.1:0", 4500)
	_, last := fdtest.ListenerAt(t, "[::1]:0", 4600)
	withFDScanHook(t, fs, func(fd string) {
		if fd == "300" {
			sameBatch.Close()
			laterBatch.Close()
		}
	})
	held, err := listenersHeld(newReader(fs, Options{}), os.Getpid(), listenersOf(first, closedNear, closedFar, last))
	if err != nil {
		t.Fatal(err)
	}
	if !held[first] || !held[last] || len(held) != 2 {
		t.Errorf("held %v: want %d and %d (not the closed %d, %d)", held, first, last, closedNear, closedFar)
	}
}

// A process that ends during the scan, reaped or not yet, is reported
// gone, not described with the listeners found so far.
func TestLiveListenersHeldProcessExits(t *testing.T) {
	fs := liveFS(t)
	testutil.Heavy(t)
	fdtest.RaiseNoFile(t, 12000)
	fdScanPaths(t, fs, func(t *testing.T, _ bool) { testListenersHeldProcessExits(t, fs) })
}

func testListenersHeldProcessExits(t *testing.T, fs *FS) {
	for _, tc := range []struct {
		reap   bool
		fds    int // open fds before the listener: 5,000 is more than one batch (workers)
		killAt int // the fd whose read ends the process
	}{{true, 0, 0}, {false, 0, 0}, {true, 5000, 4000}, {false, 5000, 4000}} {
		t.Run(fmt.Sprintf("reaped=%v,fds=%d", tc.reap, tc.fds), func(t *testing.T) {
			fs.recording = false
			ln, ino := fdtest.ListenerAt(t, "127.0.0.1:0", 300)
			dup, err := unix.Dup(int(ln.Fd()))
			if err != nil {
				t.Fatal(err)
			}
			files := make([]*os.File, 200) // closed fds, then the open ones, then the listener
			for i := 0; i < tc.fds; i += 2 {
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				files = append(files, r, w)
			}
			files = append(files, os.NewFile(uintptr(dup), "listener"))
			cmd := fdtest.HoldFiles(t, "", files)
			killed := false
			withFDScanHook(t, fs, func(fd string) {
				if n, _ := strconv.Atoi(fd); killed || n < tc.killAt {
					return
				}
				killed = true
				cmd.Process.Kill()
				if tc.reap {
					cmd.Wait()
					return
				}
				for { // wait for the zombie
					stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
					if slices.Contains([]string{"Z", "X"}, fdtest.StatState(stat)) {
						return
					}
				}
			})
			held, err := listenersHeld(newReader(fs, Options{}), cmd.Process.Pid, listenersOf(ino, 1<<62))
			if !killed || !errors.Is(err, kernel.ErrProcessGone) {
				t.Errorf("killed %v: held %v, err %v: want kernel.ErrProcessGone", killed, held, err)
			}
		})
	}
}

// The scan a capture records (every link through Readlink) says the same
// of a process that has exited but not been reaped.
func TestLiveListenersHeldZombieRecorded(t *testing.T) {
	fs := liveFS(t)
	testutil.Heavy(t)
	ln, ino := fdtest.ListenerAt(t, "127.0.0.1:0", 300)
	dup, err := unix.Dup(int(ln.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	cmd := fdtest.HoldFiles(t, "", []*os.File{os.NewFile(uintptr(dup), "listener")})
	cmd.Process.Kill()
	for { // wait for the zombie
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
		if slices.Contains([]string{"Z", "X"}, fdtest.StatState(stat)) {
			break
		}
	}
	held, err := listenersHeld(newReader(fs, Options{}), cmd.Process.Pid, listenersOf(ino))
	if !errors.Is(err, kernel.ErrProcessGone) {
		t.Errorf("held %v, err %v: want kernel.ErrProcessGone", held, err)
	}
}

// End to end: two processes in two network namespaces each get exactly
// their own TCP listeners, IPv4 and IPv6, at low and high fds; their unix
// listeners and connected sockets are not listed.
func TestLiveListenersSeveralNamespaces(t *testing.T) {
	fs := liveFS(t)
	testutil.NeedRoot(t)
	fs.recording = false
	ns := benchNetns(t)
	type scene struct {
		files  []*os.File
		inodes []uint64
	}
	open := func(sc *scene, network, addr string, keep bool) {
		ln, err := net.Listen(network, addr)
		if err != nil {
			if network == "tcp" && addr[0] == '[' {
				t.Logf("no IPv6 here: %v", err)
				return
			}
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		f, err := ln.(interface{ File() (*os.File, error) }).File()
		if err != nil {
			t.Fatal(err)
		}
		sc.files = append(sc.files, f)
		if keep {
			sc.inodes = append(sc.inodes, fdtest.FileInode(t, f))
		}
		if network == "tcp" { // a connection: its accepted end is held too
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			s, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			sf, _ := s.(*net.TCPConn).File()
			s.Close()
			sc.files = append(sc.files, sf)
		}
	}
	var here, there scene
	open(&here, "tcp", "127.0.0.1:0", true)
	open(&here, "unix", t.TempDir()+"/here.sock", false)
	here.files = append(here.files, make([]*os.File, 2000)...) // closed fds: the next listener is at fd 2000+
	open(&here, "tcp", "[::1]:0", true)
	err := netns.Do(ns, func() error {
		if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
			return fmt.Errorf("lo up: %v: %s", err, out)
		}
		open(&there, "tcp", "[::1]:0", true)
		open(&there, "unix", t.TempDir()+"/there.sock", false)
		open(&there, "tcp", "127.0.0.1:0", true)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pids := []int{fdtest.HoldFiles(t, "", here.files).Process.Pid, fdtest.HoldFiles(t, ns, there.files).Process.Pid}
	for _, record := range []bool{false, true} { // the live scan, and the one --capture records
		fs.recording = record
		snap, err := Read(fs, Options{PIDs: pids})
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range [][]uint64{here.inodes, there.inodes} {
			p := snap.Process(pids[i])
			if p == nil {
				t.Fatalf("process %d not in the snapshot: %v", pids[i], snap.Errors)
			}
			var got []uint64
			for _, l := range p.Listen {
				got = append(got, l.Inode)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) || p.NetNSIsInspector != (i == 0) {
				t.Errorf("recording %v: process %d (inspector's namespace: %v): listeners %+v, want inodes %v",
					record, pids[i], p.NetNSIsInspector, p.Listen, want)
			}
		}
	}
}

// The workers' fd ranges together cover every fd: listeners on each side
// of where the ranges meet (for this table: the first batch ends near fd
// 2,728; FDSize is 16,384, so two workers meet at 9,556) are all found.
func TestLiveListenersHeldAcrossWorkers(t *testing.T) {
	fs := liveFS(t)
	fs.recording = false
	fdtest.RaiseNoFile(t, 12000)
	fdtest.FillFDs(t, 3000)
	var inodes []uint64
	for _, fd := range []int{3, 2726, 2727, 2728, 2729, 2730, 5000, 6000, 7000, 7500, 8192, 9555, 9556, 9557, 11000} {
		if fd < 3000 {
			unix.Close(fd) // a filler's: the listener takes its place
		}
		_, ino := fdtest.ListenerAt(t, "127.0.0.1:0", fd)
		inodes = append(inodes, ino)
	}
	want := listenersOf(append(inodes, 1<<62)...) // one not held: every fd is read
	fdScanPaths(t, fs, func(t *testing.T, _ bool) {
		held, err := listenersHeld(newReader(fs, Options{}), os.Getpid(), want)
		if err != nil || len(held) != len(inodes) {
			t.Errorf("found %d of %d listeners (%v)", len(held), len(inodes), err)
		}
	})
}
