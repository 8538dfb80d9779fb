// Package redisserver starts and stops a redis-server that redline manages:
// on a free port, in its own directory, with its log kept. The lab uses it
// for its managed target and the tests use it (through redistest) for a
// real server on loopback.
package redisserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"redline/internal/netns"
	"redline/internal/resp"
)

// Options says how to start a server. The zero value starts redis-server
// from PATH on a free port of 127.0.0.1 in a new temporary directory, with
// persistence off.
type Options struct {
	Binary string // redis-server binary; default "redis-server" from PATH, else redis-tools' redis-check-rdb
	// AnyOwner runs Binary whoever owns it, as root too (the local command
	// line's explicit trust); otherwise a root redline runs only a binary
	// root owns from / down (trusted.Open).
	AnyOwner bool
	Dir      string   // working directory, written by this process alone; default a new temporary directory, removed by Stop
	Bind     string   // default 127.0.0.1
	Port     int      // 0 picks a free port
	Unix     bool     // also listen on a unix socket in Dir
	Config   []string // extra redis.conf lines, e.g. "io-threads 2"
	// Args are extra arguments after the config file, e.g. "--sentinel"
	// (the binary runs as a Sentinel).
	Args []string
	Env  []string // extra environment, e.g. "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4"
	// Wrap are wrapper commands, outermost first, each a program and its
	// arguments, such as {"numactl", "-N", "0"} or {"prlimit",
	// "--nofile=256:256", "--"}; each must exec what follows it. As root,
	// a program is found only in root's system directories (lookProgram),
	// never on PATH, and every program of the chain is given by its
	// absolute path.
	Wrap         [][]string
	StartTimeout time.Duration // default 10s
	// NetNS runs the server inside this network namespace (ip netns exec)
	// and makes Client connect from inside it. Bind must then be an
	// address of that namespace.
	NetNS string
}

// Server is a running redis-server.
type Server struct {
	Host   string
	Port   int
	Socket string // unix socket path, when Options.Unix
	Dir    string
	// LogPath names the log for people; redline itself reads the log only
	// through the descriptor it created it with (log), never by this name:
	// the directory belongs to the server's user, who can replace the name.
	LogPath  string
	ConfPath string
	NetNS    string
	log      *os.File
	cmd      *exec.Cmd
	exited   chan struct{}
	ownDir   bool
}

// Addr returns host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Pid returns the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Start starts a server and waits until it answers PING. On failure it
// returns an error that quotes the end of the server's log.
func Start(ctx context.Context, o Options) (*Server, error) {
	bin, err := openBinary(o.Binary, o.AnyOwner)
	if err != nil {
		return nil, err
	}
	defer bin.f.Close() // the child holds its own copy
	if testHookResolved != nil {
		testHookResolved()
	}
	if o.Bind == "" {
		o.Bind = "127.0.0.1"
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 10 * time.Second
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		s, err := startOnce(ctx, o, bin)
		if err == nil {
			return s, nil
		}
		lastErr = err
		// A free port can be taken between our probe and the server's bind.
		if o.Port != 0 || !strings.Contains(err.Error(), "Address already in use") {
			break
		}
	}
	return nil, lastErr
}

// testHookResolved runs once the binary is opened and checked, where a
// swap of its path would have mattered (tests).
var testHookResolved func()

func startOnce(ctx context.Context, o Options, bin *binary) (*Server, error) {
	s := &Server{Host: o.Bind, Port: o.Port, Dir: o.Dir, NetNS: o.NetNS, exited: make(chan struct{})}
	if s.Dir == "" {
		d, err := newDir()
		if err != nil {
			return nil, err
		}
		s.Dir, s.ownDir = d, true
	}
	if s.Port == 0 {
		p, err := freePortIn(o.NetNS, o.Bind)
		if err != nil {
			s.removeDir()
			return nil, err
		}
		s.Port = p
	}
	if err := s.writeConfig(o); err != nil {
		s.removeDir()
		return nil, err
	}
	if err := s.createLog(); err != nil {
		s.removeDir()
		return nil, err
	}
	exe, err := bin.execLink(s.Dir)
	if err != nil {
		s.removeDir()
		return nil, err
	}
	drop, err := s.dropPrivileges()
	if err != nil {
		s.removeDir()
		return nil, err
	}
	var wrap [][]string
	if o.NetNS != "" {
		wrap = append(wrap, []string{"ip", "netns", "exec", o.NetNS})
	}
	if len(drop) > 0 {
		wrap = append(wrap, drop)
	}
	argv, err := wrapArgv(append(wrap, o.Wrap...))
	if err != nil {
		s.removeDir()
		return nil, err
	}
	argv = append(append(argv, exe, s.ConfPath), o.Args...)
	if s.cmd, err = command(argv); err != nil {
		s.removeDir()
		return nil, err
	}
	s.cmd.ExtraFiles = []*os.File{bin.f} // fd 3, where the link points
	s.cmd.Dir = s.Dir
	s.cmd.Env = append(os.Environ(), o.Env...)
	// Its own process group keeps a terminal's Ctrl-C from killing the
	// server before redline has restored the host; Pdeathsig stops it if
	// redline itself dies.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// The server logs to its standard output (logfile ""), the file
	// createLog opened: the wrappers' complaints land there too.
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := spawn(s.cmd); err != nil {
		s.removeDir()
		return nil, fmt.Errorf("start %s: %w", strings.Join(argv, " "), err)
	}
	go func() { s.cmd.Wait(); close(s.exited) }()
	if err := s.waitReady(ctx, o.StartTimeout); err != nil {
		s.kill()
		msg := s.LogTail(15)
		s.removeDir()
		return nil, fmt.Errorf("redis-server on %s did not start: %w\n%s", s.Addr(), err, msg)
	}
	return s, nil
}

func (s *Server) writeConfig(o Options) error {
	s.ConfPath = filepath.Join(s.Dir, "redis.conf")
	lines := []string{
		"bind " + o.Bind,
		"port " + strconv.Itoa(s.Port),
		"dir " + s.Dir,
		`logfile ""`, // standard output: the file createLog opened
		"daemonize no",
		`save ""`,
		"appendonly no",
	}
	if o.NetNS != "" {
		// The namespace is private to the lab; the client reaches the
		// server over the veth link, which protected mode would refuse.
		lines = append(lines, "protected-mode no")
	}
	if o.Unix {
		s.Socket = filepath.Join(s.Dir, "redis.sock")
		lines = append(lines, "unixsocket "+s.Socket, "unixsocketperm 700")
	}
	lines = append(lines, o.Config...)
	return os.WriteFile(s.ConfPath, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return fmt.Errorf("redis-server exited: %v", s.cmd.ProcessState)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if last = s.ping(ctx); last == nil {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("no PONG within %s: %v", timeout, last)
}

func (s *Server) ping(ctx context.Context) error {
	c, err := s.Client(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	v, err := c.Do(ctx, "PING")
	if err != nil {
		return err
	}
	if v.IsError() && !strings.HasPrefix(v.Str, "NOAUTH") {
		return v.Err()
	}
	return nil
}

// Client dials the server with a one-second timeout.
func (s *Server) Client(ctx context.Context) (*resp.Client, error) {
	return resp.Dial(ctx, resp.DialOptions{Addr: s.Addr(), Timeout: time.Second, Dial: netns.Dialer(s.NetNS)})
}

// LogTail returns up to n last lines of the server's log (of its last
// logTailBytes), read through the descriptor createLog opened.
func (s *Server) LogTail(n int) string {
	b, err := io.ReadAll(s.logEnd(logTailBytes))
	if err != nil || len(b) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Exited is closed when the server process has exited.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// Stop shuts the server down (SHUTDOWN NOSAVE, then SIGTERM, then SIGKILL,
// each with a deadline) and removes its directory if Start created it.
func (s *Server) Stop() error {
	defer s.removeDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if c, err := s.Client(ctx); err == nil {
		c.Do(ctx, "SHUTDOWN", "NOSAVE") // the connection drops; no reply expected
		c.Close()
	}
	if s.waitExit(3 * time.Second) {
		return nil
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if s.waitExit(3 * time.Second) {
		return nil
	}
	s.kill()
	return errors.New("redis-server did not stop on SHUTDOWN or SIGTERM; killed")
}

func (s *Server) waitExit(d time.Duration) bool {
	select {
	case <-s.exited:
		return true
	case <-time.After(d):
		return false
	}
}

func (s *Server) kill() {
	s.cmd.Process.Kill()
	s.waitExit(5 * time.Second)
}

func (s *Server) removeDir() {
	if s.log != nil {
		s.log.Close() // a second Close only errs; a later read finds nothing
	}
	if s.ownDir {
		os.RemoveAll(s.Dir)
	}
}

func freePortIn(ns, host string) (int, error) {
	if ns == "" {
		return FreePort(host)
	}
	var p int
	err := netns.Do(ns, func() error {
		var err error
		p, err = FreePort(host)
		return err
	})
	return p, err
}

// FreePort returns a TCP port that was free on host a moment ago.
func FreePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("find a free port on %s: %w", host, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// spawn starts cmd from one OS thread that lives as long as redline: the
// kernel sends Pdeathsig when the thread that forked the child exits, not
// the process, and Go ends threads (a goroutine that exits while locked to
// its thread ends it), which would kill a healthy server mid-run.
func spawn(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnReq = make(chan spawnCall)
		go func() {
			runtime.LockOSThread() // never unlocked: this thread must not end
			for c := range spawnReq {
				c.done <- c.cmd.Start()
			}
		}()
	})
	done := make(chan error)
	spawnReq <- spawnCall{cmd, done}
	return <-done
}

type spawnCall struct {
	cmd  *exec.Cmd
	done chan error
}

var (
	spawnOnce sync.Once
	spawnReq  chan spawnCall
)
