// Package svcserver is an in-process RESP server with a known capacity:
// one goroutine serves every command in arrival order, each taking a
// fixed service time D (busy: the CPU spins), so it serves at most 1/D
// commands a second. It can also stall every Period for Stall (a fork, a
// big key's deletion, a GC pause): commands wait while it stalls. It
// answers PING, SET and GET (+OK, $-1 / the value's size in 'x'), and
// every other command with +OK, which is enough for a load generator;
// it is not a Redis.
//
// The service is kept on a virtual clock: a command finishes at
// max(its arrival, the previous finish) + D, so the cost of reading and
// writing sockets does not add to D as long as it stays below it.
package svcserver

import (
	"bufio"
	"net"
	"strconv"
	"sync"
	"time"
)

// Options configures a Server.
type Options struct {
	Service   time.Duration // D per command
	Period    time.Duration // a stall starts every Period (0: none)
	Stall     time.Duration // and lasts this long
	ValueSize int           // GET's reply size (0: nil reply)
	Addr      string        // listen address; default 127.0.0.1:0
}

// Server is a running server.
type Server struct {
	o     Options
	ln    net.Listener
	work  chan job
	start time.Time
	done  chan struct{}
	wg    sync.WaitGroup
}

type job struct {
	arrived time.Time
	reply   []byte
	out     *conn
}

type conn struct {
	mu sync.Mutex
	w  *bufio.Writer
	c  net.Conn
}

// Start listens and serves until Close.
func Start(o Options) (*Server, error) {
	addr := o.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{o: o, ln: ln, work: make(chan job, 1<<16), start: time.Now(), done: make(chan struct{})}
	s.wg.Add(2)
	go s.accept()
	go s.serve()
	return s, nil
}

// Addr is the listening address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server and closes its connections' listener.
func (s *Server) Close() {
	s.ln.Close()
	close(s.done)
	s.wg.Wait()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		go s.read(&conn{c: c, w: bufio.NewWriterSize(c, 64<<10)})
	}
}

// read parses the connection's commands and queues them for the server.
func (s *Server) read(c *conn) {
	defer c.c.Close()
	r := bufio.NewReaderSize(c.c, 64<<10)
	for {
		args, err := readCommand(r)
		if err != nil {
			return
		}
		select {
		case s.work <- job{arrived: time.Now(), reply: s.reply(args), out: c}:
		case <-s.done:
			return
		}
	}
}

func (s *Server) reply(args []string) []byte {
	if len(args) == 0 {
		return []byte("-ERR empty command\r\n")
	}
	switch upper(args[0]) {
	case "PING":
		return []byte("+PONG\r\n")
	case "GET":
		if s.o.ValueSize == 0 {
			return []byte("$-1\r\n")
		}
		v := make([]byte, s.o.ValueSize)
		for i := range v {
			v[i] = 'x'
		}
		return append(append([]byte("$"+strconv.Itoa(len(v))+"\r\n"), v...), "\r\n"...)
	case "INFO":
		info := "# Server\r\nredis_version:7.2.0\r\nredis_mode:standalone\r\n"
		return []byte("$" + strconv.Itoa(len(info)) + "\r\n" + info + "\r\n")
	case "CONFIG":
		return []byte("*0\r\n")
	}
	return []byte("+OK\r\n")
}

// serve is the one server thread: each command finishes D after the
// later of its arrival and the previous finish, past any stall.
func (s *Server) serve() {
	defer s.wg.Done()
	var free time.Time // when the server is next free
	for {
		var j job
		select {
		case j = <-s.work:
		case <-s.done:
			return
		}
		begin := j.arrived
		if free.After(begin) {
			begin = free
		}
		begin = s.pastStall(begin)
		free = begin.Add(s.o.Service)
		s.waitUntil(free)
		j.out.mu.Lock()
		j.out.w.Write(j.reply)
		j.out.w.Flush()
		j.out.mu.Unlock()
	}
}

// pastStall moves t out of a stall: stalls cover [k*Period, k*Period+Stall).
func (s *Server) pastStall(t time.Time) time.Time {
	if s.o.Period <= 0 || s.o.Stall <= 0 {
		return t
	}
	into := t.Sub(s.start) % s.o.Period
	if into < s.o.Stall {
		return t.Add(s.o.Stall - into)
	}
	return t
}

// waitUntil spins (the server is busy) until t; a long wait (a stall)
// sleeps most of it.
func (s *Server) waitUntil(t time.Time) {
	for time.Now().Before(t) {
		if d := time.Until(t); d > 2*time.Millisecond {
			time.Sleep(d - time.Millisecond)
		}
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}

// readCommand reads one RESP array of bulk strings, or an inline command.
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := readLine(r)
	if err != nil {
		return nil, err
	}
	if len(line) == 0 || line[0] != '*' {
		return splitInline(line), nil
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil {
		return nil, err
	}
	args := make([]string, 0, n)
	for range n {
		h, err := readLine(r)
		if err != nil {
			return nil, err
		}
		size, err := strconv.Atoi(h[1:])
		if err != nil || size < 0 {
			return nil, err
		}
		b := make([]byte, size+2)
		if _, err := ioReadFull(r, b); err != nil {
			return nil, err
		}
		args = append(args, string(b[:size]))
	}
	return args, nil
}

func readLine(r *bufio.Reader) (string, error) {
	l, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if len(l) >= 2 && l[len(l)-2] == '\r' {
		return l[:len(l)-2], nil
	}
	return l[:len(l)-1], nil
}

func splitInline(l string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(l); i++ {
		if i == len(l) || l[i] == ' ' {
			if start >= 0 {
				out = append(out, l[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	return out
}

func ioReadFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
