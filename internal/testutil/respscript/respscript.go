// Package respscript is an in-process RESP server for tests that need a
// server to misbehave on cue: stop answering until released, close the
// connection, answer with an error, or answer late, on the nth request of
// a command. It answers the handshake and admin commands a client sends
// (HELLO, AUTH, SELECT, CLIENT, PING, INFO, CONFIG GET) and the common data
// commands well enough for a load generator; it is not a Redis.
//
// Tests wait on what the server saw (Seen) instead of sleeping.
package respscript

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Request is one command as the server received it.
type Request struct {
	Conn int      // the connection, numbered from 1 in accept order
	Cmd  string   // the command name, upper case
	Args []string // all arguments, the command name first
	N    int64    // this is the Nth Cmd the server received, from 1, over all connections
}

// Action is what the server does with a request.
type Action struct {
	kind  actionKind
	err   string
	delay time.Duration
	raw   []byte
	chunk []byte
	total int64
}

type actionKind uint8

const (
	actReply actionKind = iota
	actError
	actClose
	actStall
	actDelay
	actRaw
	actStream
	actDrip
)

// Reply answers normally.
func Reply() Action { return Action{} }

// Error answers with the error reply msg ("ERR something" -> "-ERR something").
func Error(msg string) Action { return Action{kind: actError, err: msg} }

// Close closes the connection instead of answering.
func Close() Action { return Action{kind: actClose} }

// Stall stops answering on this connection until Release is called (or the
// server is closed); the request is then answered normally.
func Stall() Action { return Action{kind: actStall} }

// Raw answers with b as it is: a hostile or broken server's reply (nested
// past any sane depth, huge, not RESP at all).
func Raw(b []byte) Action { return Action{kind: actRaw, raw: b} }

// Stream answers with head, then chunk again and again until total bytes
// are sent or the connection fails, then holds the connection open like
// Stall: a hostile server announcing a 4 GiB bulk ("$4294967295\r\n") or
// an endless array and streaming it. total bounds what a client without a
// limit buffers in a test.
func Stream(head, chunk []byte, total int64) Action {
	return Action{kind: actStream, raw: head, chunk: chunk, total: total}
}

// Drip answers with b one byte at a time, every interval: a reply whose
// bytes keep arriving but that takes far longer than any deadline.
func Drip(b []byte, interval time.Duration) Action {
	return Action{kind: actDrip, raw: b, delay: interval}
}

// Delay answers normally after d.
func Delay(d time.Duration) Action { return Action{kind: actDelay, delay: d} }

// Script decides each request's action; nil answers everything normally.
type Script func(Request) Action

// OnNth is a script that does a to the nth request of cmd (over all
// connections) and answers everything else normally.
func OnNth(cmd string, n int64, a Action) Script {
	cmd = strings.ToUpper(cmd)
	return func(r Request) Action {
		if r.Cmd == cmd && r.N == n {
			return a
		}
		return Reply()
	}
}

// Options configures a Server.
type Options struct {
	Script   Script
	Password string            // when set, AUTH must give it and commands before AUTH get NOAUTH
	Config   map[string]string // what CONFIG GET returns; defaults to save "" and appendonly no
	Version  string            // redis_version in INFO; default "7.2.0"
	// MaxClients, when > 0, refuses connections beyond it as Redis does
	// at maxclients: the error reply, then close.
	MaxClients int
	// Socket, when set, is a unix socket path to listen on instead of
	// 127.0.0.1.
	Socket string
}

// Server is a running scripted server on loopback.
type Server struct {
	o  Options
	ln net.Listener

	mu      sync.Mutex
	counts  map[string]int64
	waiters []waiter
	conns   map[int]net.Conn
	nconns  int
	refused int
	release chan struct{}
	closed  bool
	wg      sync.WaitGroup
}

type waiter struct {
	cmd string
	n   int64
	ch  chan struct{}
}

// Start starts a server on 127.0.0.1 (or o.Socket) and stops it when the
// test ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	network, addr := "tcp", "127.0.0.1:0"
	if o.Socket != "" {
		network, addr = "unix", o.Socket
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	if o.Config == nil {
		o.Config = map[string]string{"save": "", "appendonly": "no"}
	}
	if o.Version == "" {
		o.Version = "7.2.0"
	}
	s := &Server{o: o, ln: ln, counts: map[string]int64{}, conns: map[int]net.Conn{}, release: make(chan struct{})}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.Close)
	return s
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Port is the server's port (on TCP).
func (s *Server) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// Seen returns a channel closed once the server has received n requests of
// cmd.
func (s *Server) Seen(cmd string, n int64) <-chan struct{} {
	cmd = strings.ToUpper(cmd)
	ch := make(chan struct{})
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.counts[cmd] >= n {
		close(ch)
		return ch
	}
	s.waiters = append(s.waiters, waiter{cmd, n, ch})
	return ch
}

// Count returns how many requests of cmd the server has received.
func (s *Server) Count(cmd string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[strings.ToUpper(cmd)]
}

// Refused returns how many connections were refused at MaxClients.
func (s *Server) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// StopListening closes the listening socket: new connections are
// refused (ECONNREFUSED), open ones go on.
func (s *Server) StopListening() { s.ln.Close() }

// Release lets every stalled connection answer again.
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		close(s.release)
		s.release = make(chan struct{})
	}
}

// Close stops the server: it releases stalls, closes every connection and
// waits for their goroutines.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.release)
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.ln.Close()
	s.wg.Wait()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		if s.o.MaxClients > 0 && len(s.conns) >= s.o.MaxClients {
			s.refused++
			s.mu.Unlock()
			c.Write([]byte("-ERR max number of clients reached\r\n"))
			c.Close()
			continue
		}
		s.nconns++
		id := s.nconns
		s.conns[id] = c
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(id, c)
	}
}

// count records a request and wakes the waiters it satisfies.
func (s *Server) count(cmd string) (int64, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[cmd]++
	n := s.counts[cmd]
	kept := s.waiters[:0]
	for _, w := range s.waiters {
		if w.cmd == cmd && n >= w.n {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	s.waiters = kept
	return n, s.release
}

type session struct {
	authed bool
	proto  int
}

func (s *Server) serve(id int, c net.Conn) {
	defer s.wg.Done()
	defer func() {
		c.Close()
		s.mu.Lock()
		delete(s.conns, id)
		s.mu.Unlock()
	}()
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	sess := session{authed: s.o.Password == "", proto: 2}
	for {
		args, err := readCommand(r)
		if err != nil {
			return
		}
		if len(args) == 0 {
			continue
		}
		req := Request{Conn: id, Cmd: strings.ToUpper(args[0]), Args: args}
		var release <-chan struct{}
		req.N, release = s.count(req.Cmd)
		a := Reply()
		if s.o.Script != nil {
			a = s.o.Script(req)
		}
		switch a.kind {
		case actClose:
			w.Flush() // what was answered before goes out, as from a real server
			return
		case actError:
			w.WriteString("-" + a.err + "\r\n")
		case actRaw:
			w.Write(a.raw)
		case actStream:
			stream(w, a)
			<-release
			return
		case actDrip:
			if !drip(w, a) {
				return
			}
		case actStall:
			w.Flush()
			<-release
			s.answer(w, &sess, args)
		case actDelay:
			w.Flush()
			time.Sleep(a.delay)
			s.answer(w, &sess, args)
		default:
			s.answer(w, &sess, args)
		}
		if r.Buffered() == 0 {
			if w.Flush() != nil {
				return
			}
		}
	}
}

func stream(w *bufio.Writer, a Action) {
	w.Write(a.raw)
	for sent := int64(len(a.raw)); sent < a.total; sent += int64(len(a.chunk)) {
		if _, err := w.Write(a.chunk); err != nil {
			return
		}
	}
	w.Flush()
}

func drip(w *bufio.Writer, a Action) bool {
	for _, b := range a.raw {
		w.WriteByte(b)
		if w.Flush() != nil {
			return false
		}
		time.Sleep(a.delay)
	}
	return true
}

// answer writes a plausible reply to args.
func (s *Server) answer(w *bufio.Writer, sess *session, args []string) {
	cmd := strings.ToUpper(args[0])
	if !sess.authed && cmd != "AUTH" && cmd != "HELLO" {
		w.WriteString("-NOAUTH Authentication required.\r\n")
		return
	}
	switch cmd {
	case "AUTH":
		if args[len(args)-1] != s.o.Password || s.o.Password == "" {
			w.WriteString("-WRONGPASS invalid username-password pair or user is disabled.\r\n")
			return
		}
		sess.authed = true
		w.WriteString("+OK\r\n")
	case "HELLO":
		if len(args) > 1 && args[1] == "3" {
			sess.proto = 3
			w.WriteString("%2\r\n+server\r\n+redis\r\n+proto\r\n:3\r\n")
			return
		}
		w.WriteString("*4\r\n$6\r\nserver\r\n$5\r\nredis\r\n$5\r\nproto\r\n:2\r\n")
	case "PING":
		w.WriteString("+PONG\r\n")
	case "INFO":
		bulk(w, fmt.Sprintf("# Server\r\nredis_version:%s\r\nredis_mode:standalone\r\nos:Linux respscript\r\nprocess_id:0\r\n# Memory\r\nmem_allocator:libc\r\n", s.o.Version))
	case "CONFIG":
		s.config(w, args)
	case "GET":
		w.WriteString("$-1\r\n")
	case "INCR", "LPUSH", "RPUSH", "SADD", "HSET", "ZADD", "DEL", "EXISTS":
		w.WriteString(":1\r\n")
	case "LPOP", "RPOP", "SPOP":
		w.WriteString("$-1\r\n")
	case "LRANGE":
		w.WriteString("*0\r\n")
	default:
		w.WriteString("+OK\r\n")
	}
}

func (s *Server) config(w *bufio.Writer, args []string) {
	if len(args) < 3 || !strings.EqualFold(args[1], "GET") {
		w.WriteString("+OK\r\n")
		return
	}
	var pairs []string
	for k, v := range s.o.Config {
		if args[2] == "*" || args[2] == k {
			pairs = append(pairs, k, v)
		}
	}
	w.WriteString("*" + strconv.Itoa(len(pairs)) + "\r\n")
	for _, p := range pairs {
		bulk(w, p)
	}
}

func bulk(w *bufio.Writer, s string) {
	w.WriteString("$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n")
}

// readCommand reads one request: a RESP array of bulk strings, or an
// inline command line.
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := readLine(r)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(line, "*") {
		return strings.Fields(line), nil
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 0 {
		return nil, fmt.Errorf("bad array header %q", line)
	}
	args := make([]string, 0, n)
	for range n {
		h, err := readLine(r)
		if err != nil {
			return nil, err
		}
		size, err := strconv.Atoi(strings.TrimPrefix(h, "$"))
		if !strings.HasPrefix(h, "$") || err != nil || size < 0 {
			return nil, fmt.Errorf("bad bulk header %q", h)
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		args = append(args, string(b[:size]))
	}
	return args, nil
}

func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		if errors.Is(err, io.EOF) && line != "" {
			return "", io.ErrUnexpectedEOF
		}
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}
