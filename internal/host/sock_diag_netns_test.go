package host

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"redline/internal/host/kernel"
	"redline/internal/netns"
	"redline/internal/testutil"
	"redline/internal/testutil/fdtest"
)

// nsServer is a server in a network namespace of the test's: a child
// process there holds its listeners (IPv4, and IPv6 when the namespace
// has ::1) and the server ends of conns connections to each; the client
// ends stay with the test.
type nsServer struct {
	cmd   *exec.Cmd
	ports []int
}

// startNSServer starts it; argv prefixes the holder's "sleep 3600" inside
// the namespace (a command that drops privileges, or nothing).
func startNSServer(t *testing.T, conns int, argv ...string) *nsServer {
	t.Helper()
	ns := benchNetns(t)
	var files []*os.File
	var ports []int
	err := netns.Do(ns, func() error {
		if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
			return fmt.Errorf("lo up: %v: %s", err, out)
		}
		for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
			fs, port, err := listenWithConns(t, addr, conns)
			if err != nil {
				if addr == "[::1]:0" {
					t.Logf("no IPv6 in the namespace: %v", err)
					continue
				}
				return err
			}
			files, ports = append(files, fs...), append(ports, port)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd := fdtest.HoldFilesCmd(t, files, append(append([]string{"ip", "netns", "exec", ns}, argv...), "sleep", "3600")...)
	return &nsServer{cmd: cmd, ports: ports}
}

// listenWithConns listens on addr in the caller's namespace and connects
// conns clients to it: files are the listener and the server ends, for a
// holder process to keep (the client ends close with the test).
func listenWithConns(t *testing.T, addr string, conns int) (files []*os.File, port int, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, 0, err
	}
	defer ln.Close()
	f, _ := ln.(*net.TCPListener).File()
	files = append(files, f)
	for range conns {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			return nil, 0, err
		}
		t.Cleanup(func() { c.Close() })
		s, err := ln.Accept()
		if err != nil {
			return nil, 0, err
		}
		f, _ := s.(*net.TCPConn).File()
		files = append(files, f)
		s.Close()
	}
	return files, ln.Addr().(*net.TCPAddr).Port, nil
}

// procNetSummary is what the /proc/PID/net path gives for the ports:
// the tables read and filtered as the sock_diag dumps are.
func procNetSummary(t *testing.T, pid int, ports []int) *TCPSummary {
	t.Helper()
	var all []tcpSocket
	for _, fam := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, fam))
		if err != nil {
			t.Fatal(err)
		}
		socks, err := parseTCP(data, fam)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, socks...)
	}
	return summarizeTCP(filterSockets(filterSockets(nil, all, true, nil), all, false, ports), ports)
}

// A server in another network namespace: its sockets are dumped through
// sock_diag inside that namespace, and the counts are those of its
// /proc/PID/net tables, IPv4 and IPv6.
func TestLiveNetnsSockDiag(t *testing.T) {
	liveFS(t)
	testutil.NeedRoot(t)
	srv := startNSServer(t, 3)
	pid := srv.cmd.Process.Pid
	fs := liveFS(t)
	s, err := Read(fs, Options{PIDs: []int{pid}})
	if err != nil {
		t.Fatal(err)
	}
	p := s.Process(pid)
	if p == nil || p.Net == nil || p.Net.TCP == nil {
		t.Fatalf("process %+v; errors %+v", p, s.Errors)
	}
	if p.NetNSIsInspector || len(p.Listen) != len(srv.ports) {
		t.Errorf("listeners %+v (own namespace: %v), want ports %v", p.Listen, !p.NetNSIsInspector, srv.ports)
	}
	got := p.Net.TCP
	if got.Source != "sock_diag" || got.Scope != "ports" {
		t.Errorf("source %q scope %q, want sock_diag, ports", got.Source, got.Scope)
	}
	want := procNetSummary(t, pid, srv.ports)
	if !mapsEqual(got.ByState, want.ByState) || !slices.Equal(got.Ports, want.Ports) {
		t.Errorf("sock_diag %+v\n/proc/%d/net %+v", got, pid, want)
	}
	if got.ByState["ESTABLISHED"] != 2*3*len(srv.ports) || got.ByState["LISTEN"] != len(srv.ports) {
		t.Errorf("by state %v, want %d established, %d listening", got.ByState, 6*len(srv.ports), len(srv.ports))
	}
	// A capture keeps the namespace's dumps: the tree gives the same.
	dir := t.TempDir() + "/tree"
	if _, err := Capture(fs, dir); err != nil {
		t.Fatal(err)
	}
	tree, err := NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Read(tree, Options{PIDs: []int{pid}})
	q := again.Process(pid)
	if q == nil || q.Net == nil || q.Net.TCP == nil || q.Net.TCP.Source != "sock_diag" ||
		!mapsEqual(q.Net.TCP.ByState, got.ByState) || !slices.Equal(q.Net.TCP.Ports, got.Ports) || !slices.Equal(q.Listen, p.Listen) {
		t.Errorf("from the capture: %+v\nlive: %+v", q, p)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A process that ends just before its namespace is entered, reaped or a
// zombie: no sock_diag, no /proc/PID/net, no fds: it is reported gone,
// not described empty.
func TestLiveNetnsSockDiagProcessGone(t *testing.T) {
	liveFS(t)
	testutil.NeedRoot(t)
	for _, reap := range []bool{true, false} {
		t.Run(map[bool]string{true: "reaped", false: "zombie"}[reap], func(t *testing.T) {
			srv := startNSServer(t, 1)
			pid := srv.cmd.Process.Pid
			fs := liveFS(t)
			withLive(t, fs, func(l *kernel.Live) {
				l.BeforeNetns = func(p int) {
					if p != pid {
						return
					}
					srv.cmd.Process.Kill()
					if reap {
						srv.cmd.Wait()
						return
					}
					var info unix.Siginfo // wait until it is a zombie, leave it one
					if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
						t.Error(err)
					}
				}
			})
			s, err := Read(fs, Options{PIDs: []int{pid}})
			if err != nil {
				t.Fatal(err)
			}
			if p := s.Process(pid); p != nil {
				t.Fatalf("a process that ended is described: %+v", p)
			}
			found := false
			for _, e := range s.Errors {
				found = found || strings.Contains(e.Error, strconv.Itoa(pid)) && strings.Contains(e.Error, "ended")
			}
			if !found {
				t.Errorf("errors %+v do not say pid %d ended", s.Errors, pid)
			}
		})
	}
}

const nsDiagNobodyEnv = "REDLINE_TEST_NSDIAG_PID"

// Without CAP_SYS_ADMIN (as uid 65534, inspecting a server of its own uid
// in another namespace) the namespace cannot be entered: the sockets come
// from /proc/PID/net, the same counts, and Source says so and why.
func TestLiveNetnsSockDiagNoPrivilege(t *testing.T) {
	if env := os.Getenv(nsDiagNobodyEnv); env != "" {
		checkNoPrivilegeFallback(t, env)
		return
	}
	liveFS(t)
	testutil.NeedRoot(t)
	const nobody = 65534
	srv := startNSServer(t, 2, "setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups")
	base := t.TempDir()
	for d := base; strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(base, "host.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	ports := make([]string, len(srv.ports))
	for i, p := range srv.ports {
		ports[i] = strconv.Itoa(p)
	}
	cmd := exec.Command(bin, "-test.run=^TestLiveNetnsSockDiagNoPrivilege$", "-test.count=1", "-test.v")
	cmd.Dir = base
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d:%s", nsDiagNobodyEnv, srv.cmd.Process.Pid, strings.Join(ports, ",")))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as uid %d: %v\n%s", nobody, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestLiveNetnsSockDiagNoPrivilege") {
		t.Fatalf("the child did not run the test:\n%s", out)
	}
	t.Logf("as uid %d:\n%s", nobody, out)
}

func checkNoPrivilegeFallback(t *testing.T, env string) {
	pidText, portsText, _ := strings.Cut(env, ":")
	pid, _ := strconv.Atoi(pidText)
	var ports []int
	for _, p := range strings.Split(portsText, ",") {
		n, _ := strconv.Atoi(p)
		ports = append(ports, n)
	}
	if os.Geteuid() == 0 {
		t.Fatal("running as root")
	}
	fs, err := NewFSWith(FSOptions{Root: "/"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Read(fs, Options{PIDs: []int{pid}})
	if err != nil {
		t.Fatal(err)
	}
	p := s.Process(pid)
	if p == nil || p.Net == nil || p.Net.TCP == nil {
		t.Fatalf("process %+v; errors %+v", p, s.Errors)
	}
	got := p.Net.TCP
	t.Logf("source: %s", got.Source)
	if !strings.HasPrefix(got.Source, fmt.Sprintf("/proc/%d/net/tcp, tcp6 (", pid)) || !strings.Contains(got.Source, "operation not permitted") || got.Scope != "" {
		t.Errorf("source %q scope %q: want the /proc tables, and why not sock_diag", got.Source, got.Scope)
	}
	if len(p.Listen) != len(ports) {
		t.Errorf("listeners %+v, want ports %v", p.Listen, ports)
	}
	want := procNetSummary(t, pid, ports)
	if !slices.Equal(got.Ports, want.Ports) || got.ByState["ESTABLISHED"] != want.ByState["ESTABLISHED"] {
		t.Errorf("fallback %+v\nwant %+v", got, want)
	}
}

// Two servers in one other namespace share its sock_diag socket, and
// their dumps run beside the reader at once: each is summarised with its
// own port only, though the namespace's dump holds both ports' sockets.
func TestLiveNetnsTwoServersOneNamespace(t *testing.T) {
	liveFS(t)
	testutil.NeedRoot(t)
	ns := benchNetns(t)
	held := make([][]*os.File, 2)
	var ports []int
	err := netns.Do(ns, func() error {
		if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
			return fmt.Errorf("lo up: %v: %s", err, out)
		}
		for i, conns := range []int{2, 5} {
			fs, port, err := listenWithConns(t, "127.0.0.1:0", conns)
			if err != nil {
				return err
			}
			held[i], ports = fs, append(ports, port)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, files := range held {
		cmd := fdtest.HoldFilesCmd(t, files, "ip", "netns", "exec", ns, "sleep", "3600")
		pids = append(pids, cmd.Process.Pid)
	}
	// inspect's FS: one that does not record runs the dumps beside the
	// reader (a recording one reads in order)
	fs, err := NewFSWith(FSOptions{Root: "/"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Read(fs, Options{PIDs: pids})
	if err != nil {
		t.Fatal(err)
	}
	for i, pid := range pids {
		p := s.Process(pid)
		if p == nil || p.Net == nil || p.Net.TCP == nil {
			t.Fatalf("process %d: %+v; errors %+v", pid, p, s.Errors)
		}
		got := p.Net.TCP
		want := procNetSummary(t, pid, ports[i:i+1])
		if got.Source != "sock_diag" || !mapsEqual(got.ByState, want.ByState) || !slices.Equal(got.Ports, want.Ports) || len(got.Ports) != 1 || got.Ports[0].Port != ports[i] {
			t.Errorf("process %d: sock_diag %+v\n/proc/%d/net %+v", pid, got, pid, want)
		}
		if n := got.ByState["ESTABLISHED"]; n != 2*[]int{2, 5}[i] {
			t.Errorf("process %d: %d established, want %d", pid, n, 2*[]int{2, 5}[i])
		}
	}
	// A capture has one dump of both ports; a capture made before the
	// dump was named after the namespace's listening ports has one per
	// process, named after its own port: both read as the live machine.
	rec := liveFS(t)
	recorded, err := Read(rec, Options{PIDs: pids})
	if err != nil {
		t.Fatal(err)
	}
	// The namespace's sysctls are read once for both (TestReadsNoFileTwice).
	seen := checkReadOnce(t, rec)
	for _, pid := range pids {
		p := recorded.Process(pid)
		if p == nil || p.NetSysctls["net.core.somaxconn"] == "" {
			t.Errorf("process %d: no somaxconn of its namespace: %+v", pid, p)
			continue
		}
		if n := seen[netnsPath(p.NetNS, SysctlPath("net.core.somaxconn"))]; n != 1 {
			t.Errorf("process %d: its namespace's somaxconn read %d times, want once", pid, n)
		}
	}
	dir := t.TempDir() + "/tree"
	if _, err := Capture(rec, dir); err != nil {
		t.Fatal(err)
	}
	dumps, _ := filepath.Glob(dir + "/netns/*/sockdiag/tcp-ports-*")
	if len(dumps) != 1 {
		t.Fatalf("dumps in the capture: %v, want one of both ports", dumps)
	}
	for _, old := range []bool{false, true} {
		if old {
			data, err := os.ReadFile(dumps[0])
			if err != nil {
				t.Fatal(err)
			}
			os.Remove(dumps[0])
			for _, port := range ports {
				os.WriteFile(filepath.Join(filepath.Dir(dumps[0]), fmt.Sprintf("tcp-ports-%d", port)), data, 0o644)
			}
		}
		tree, err := NewFS(dir)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := Read(tree, Options{PIDs: pids})
		for i, pid := range pids {
			q, live := again.Process(pid), s.Process(pid)
			if q == nil || q.Net == nil || q.Net.TCP == nil || q.Net.TCP.Source != "sock_diag" || !mapsEqual(q.Net.TCP.ByState, live.Net.TCP.ByState) {
				t.Errorf("old-style capture %v, process %d (port %d): %+v, live %+v", old, pid, ports[i], q, live.Net.TCP)
			}
		}
	}
}
