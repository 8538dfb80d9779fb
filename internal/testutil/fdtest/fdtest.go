// Package fdtest holds the fd helpers of the tests of internal/host and
// internal/host/kernel: listeners and sockets at chosen fd numbers,
// processes that hold files, RLIMIT_NOFILE, and CPU time per operation.
package fdtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ListenerAt opens a TCP listener on addr and moves it to fd n of this
// process; it returns the fd's file and the socket's inode.
func ListenerAt(t testing.TB, addr string, n int) (*os.File, uint64) {
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
	return moved, FileInode(t, moved)
}

// FileInode is the inode of f.
func FileInode(t testing.TB, f *os.File) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// FillFDs opens n fds (pipe ends) until the test ends.
func FillFDs(t *testing.T, n int) {
	t.Helper()
	for i := 0; i < n; i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
	}
}

// SocketAt opens one end of a unix socket pair at fd n until the test
// ends.
func SocketAt(t *testing.T, n int) {
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

// StatState is the state field of a /proc/PID/stat line ("S", "Z").
func StatState(stat []byte) string {
	for i := len(stat) - 1; i >= 0; i-- {
		if stat[i] == ')' && i+2 < len(stat) {
			return string(stat[i+2])
		}
	}
	return ""
}

// ReportCPU reports the process's CPU time (user + system) per operation
// as cpu-ms/op: on a shared machine wall time measures the neighbours too.
func ReportCPU(b *testing.B) func() {
	start := cpuTime(b)
	return func() { b.ReportMetric(float64(cpuTime(b)-start)/1e6/float64(b.N), "cpu-ms/op") }
}

func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// RaiseNoFile lifts RLIMIT_NOFILE to at least n (up to the hard limit).
func RaiseNoFile(b testing.TB, n uint64) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatal(err)
	}
	if lim.Cur >= n {
		return
	}
	old := lim
	lim.Cur = n
	if lim.Max < n { // root may raise the hard limit too (up to fs.nr_open)
		lim.Max = n
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			b.Skipf("RLIMIT_NOFILE hard limit %d < %d, and raising it: %v", old.Max, n, err)
		}
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
}

// HoldFiles starts a process (in the network namespace ns, "" for this
// one's) that holds files as its fds 3, 4 ... until the test ends, and
// closes this process's copies (nil entries are closed fds there).
func HoldFiles(t testing.TB, ns string, files []*os.File) *exec.Cmd {
	t.Helper()
	if ns != "" {
		return HoldFilesCmd(t, files, "ip", "netns", "exec", ns, "sleep", "3600")
	}
	return HoldFilesCmd(t, files, "sleep", "3600")
}

// HoldFilesCmd is HoldFiles with the command that ends by exec'ing sleep.
func HoldFilesCmd(t testing.TB, files []*os.File, argv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.ExtraFiles = files
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		f.Close() // the child has them
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// ip netns exec execs sleep in place: the pid is the holder's once
	// its namespace is the one asked for.
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", cmd.Process.Pid)); strings.TrimSpace(string(comm)) == "sleep" {
			return cmd
		}
	}
	t.Fatal("the holder did not start")
	return nil
}

// Connect dials ln and accepts the connection; both ends are closed when
// the test ends.
func Connect(t testing.TB, ln net.Listener) {
	t.Helper()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
}
