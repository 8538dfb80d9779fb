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

	"redline/internal/netns"
	"redline/internal/testutil"
)

func TestParseSocketLink(t *testing.T) {
	for _, tc := range []struct {
		in  string
		ino uint64
		ok  bool
	}{
		{"socket:[22220]", 22220, true},
		{"socket:[18446744073709551615]", 1<<64 - 1, true},
		{"socket:[18446744073709551616]", 0, false}, // overflows
		{"socket:[]", 0, false},
		{"socket:[12", 0, false},
		{"socket:[1x]", 0, false},
		{"pipe:[22220]", 0, false},
		{"anon_inode:[eventpoll]", 0, false},
		{"/dev/null", 0, false},
		{"", 0, false},
	} {
		ino, ok := parseSocketLink([]byte(tc.in))
		if ino != tc.ino || ok != tc.ok {
			t.Errorf("parseSocketLink(%q) = %d, %v; want %d, %v", tc.in, ino, ok, tc.ino, tc.ok)
		}
	}
}

// listenerAt opens a TCP listener on addr and moves it to fd n of this
// process; it returns the fd's file and the socket's inode.
func listenerAt(t testing.TB, addr string, n int) (*os.File, uint64) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ln.(*net.TCPListener).File()
	ln.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Dup3(int(f.Fd()), n, unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	moved := os.NewFile(uintptr(n), fmt.Sprintf("listener fd %d", n))
	t.Cleanup(func() { moved.Close() })
	return moved, fileInode(t, moved)
}

func fileInode(t testing.TB, f *os.File) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// fillFDs opens n fds (pipe ends) until the test ends.
func fillFDs(t *testing.T, n int) {
	t.Helper()
	for i := 0; i < n; i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
	}
}

// socketAt opens one end of a unix socket pair at fd n until the test
// ends.
func socketAt(t *testing.T, n int) {
	t.Helper()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	if err := unix.Dup3(pair[0], n, unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(n) })
}

// fdScanPaths runs test on each path of the live scan of a table larger
// than one getdents batch: readlink by workers, and the task_file
// iterator (skipped, with the reason, where it does not work).
func fdScanPaths(t *testing.T, test func(t *testing.T, iterator bool)) {
	t.Run("readlink", func(t *testing.T) {
		fdIterOff = true
		t.Cleanup(func() { fdIterOff = false })
		test(t, false)
	})
	t.Run("iterator", func(t *testing.T) {
		needFDIter(t)
		test(t, true)
		if err := fdIterErr(); err != nil {
			t.Errorf("the iterator failed: %v", err)
		}
	})
}

// withFDScanHook sets the live scan's hook for the test.
func withFDScanHook(t *testing.T, hook func(fd string)) {
	fdScanHook = hook
	t.Cleanup(func() { fdScanHook = nil })
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
	raiseNoFile(t, 6000)
	_, low := listenerAt(t, "127.0.0.1:0", 300)
	fillFDs(t, 3000)
	_, high := listenerAt(t, "127.0.0.1:0", 4500)
	socketAt(t, 4501)         // right after the last listener
	const elsewhere = 1 << 62 // a listener of the namespace this process does not hold
	r := newReader(fs, Options{})
	fdScanPaths(t, func(t *testing.T, iterator bool) {
		var read []string
		withFDScanHook(t, func(fd string) { read = append(read, fd) })
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
	fdIterOff = true
	t.Cleanup(func() { fdIterOff = false })
	raiseNoFile(t, 6000)
	_, first := listenerAt(t, "127.0.0.1:0", 300)
	sameBatch, closedNear := listenerAt(t, "127.0.0.1:0", 600)
	fillFDs(t, 3000)
	laterBatch, closedFar := listenerAt(t, "127.0.0.1:0", 4500)
	_, last := listenerAt(t, "[::1]:0", 4600)
	withFDScanHook(t, func(fd string) {
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
	raiseNoFile(t, 12000)
	fdScanPaths(t, func(t *testing.T, _ bool) { testListenersHeldProcessExits(t, fs) })
}

func testListenersHeldProcessExits(t *testing.T, fs *FS) {
	for _, tc := range []struct {
		reap   bool
		fds    int // open fds before the listener: 5,000 is more than one batch (workers)
		killAt int // the fd whose read ends the process
	}{{true, 0, 0}, {false, 0, 0}, {true, 5000, 4000}, {false, 5000, 4000}} {
		t.Run(fmt.Sprintf("reaped=%v,fds=%d", tc.reap, tc.fds), func(t *testing.T) {
			fs.recording = false
			ln, ino := listenerAt(t, "127.0.0.1:0", 300)
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
			cmd := holdFiles(t, "", files)
			killed := false
			withFDScanHook(t, func(fd string) {
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
					if slices.Contains([]string{"Z", "X"}, statState(stat)) {
						return
					}
				}
			})
			held, err := listenersHeld(newReader(fs, Options{}), cmd.Process.Pid, listenersOf(ino, 1<<62))
			if !killed || !errors.Is(err, errProcessGone) {
				t.Errorf("killed %v: held %v, err %v: want errProcessGone", killed, held, err)
			}
		})
	}
}

// The scan a capture records (every link through Readlink) says the same
// of a process that has exited but not been reaped.
func TestLiveListenersHeldZombieRecorded(t *testing.T) {
	fs := liveFS(t)
	testutil.Heavy(t)
	ln, ino := listenerAt(t, "127.0.0.1:0", 300)
	dup, err := unix.Dup(int(ln.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	cmd := holdFiles(t, "", []*os.File{os.NewFile(uintptr(dup), "listener")})
	cmd.Process.Kill()
	for { // wait for the zombie
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
		if slices.Contains([]string{"Z", "X"}, statState(stat)) {
			break
		}
	}
	held, err := listenersHeld(newReader(fs, Options{}), cmd.Process.Pid, listenersOf(ino))
	if !errors.Is(err, errProcessGone) {
		t.Errorf("held %v, err %v: want errProcessGone", held, err)
	}
}

func statState(stat []byte) string {
	for i := len(stat) - 1; i >= 0; i-- {
		if stat[i] == ')' && i+2 < len(stat) {
			return string(stat[i+2])
		}
	}
	return ""
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
			sc.inodes = append(sc.inodes, fileInode(t, f))
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
	pids := []int{holdFiles(t, "", here.files).Process.Pid, holdFiles(t, ns, there.files).Process.Pid}
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
	raiseNoFile(t, 12000)
	fillFDs(t, 3000)
	var inodes []uint64
	for _, fd := range []int{3, 2726, 2727, 2728, 2729, 2730, 5000, 6000, 7000, 7500, 8192, 9555, 9556, 9557, 11000} {
		if fd < 3000 {
			unix.Close(fd) // a filler's: the listener takes its place
		}
		_, ino := listenerAt(t, "127.0.0.1:0", fd)
		inodes = append(inodes, ino)
	}
	want := listenersOf(append(inodes, 1<<62)...) // one not held: every fd is read
	fdScanPaths(t, func(t *testing.T, _ bool) {
		held, err := listenersHeld(newReader(fs, Options{}), os.Getpid(), want)
		if err != nil || len(held) != len(inodes) {
			t.Errorf("found %d of %d listeners (%v)", len(held), len(inodes), err)
		}
	})
}
