package redisserver

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// The server's log and who can touch it. A root redline hands the
// server's directory to the server's user (dropPrivileges), and anything
// running as that user (the distribution's own redis-server, nobody) can
// then replace any name in it, redis.log with a link to /etc/shadow
// among them. So redline never opens the log by name after the handover:
// it creates the file itself, before, owned by the invoking user and
// readable by it alone, gives the server the open descriptor as its
// standard output and error (logfile ""), and reads the log back only
// through its own descriptor, a bounded tail at most. Whatever the name
// comes to point at, nothing but what the server wrote is read.

// logTailBytes bounds what LogTail reads: the end of the log, enough for
// its last lines.
const logTailBytes = 64 << 10

// LogKeepBytes bounds what a caller keeps of a log (Log): its end.
const LogKeepBytes = 16 << 20

// createLog creates DIR/redis.log anew (a name already there is removed
// first: O_EXCL never opens what someone planted) and keeps it open.
func (s *Server) createLog() error {
	p := filepath.Join(s.Dir, "redis.log")
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("redis-server log: %w", err)
	}
	fd, err := unix.Open(p, unix.O_RDWR|unix.O_APPEND|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("redis-server log: %w", &os.PathError{Op: "create", Path: p, Err: err})
	}
	s.log, s.LogPath = os.NewFile(uintptr(fd), p), p
	return nil
}

// Log returns the end of the server's log, at most LogKeepBytes, read
// through the descriptor redline created the log with (never its name).
// Empty once the server is stopped.
func (s *Server) Log() io.Reader { return s.logEnd(LogKeepBytes) }

// logEnd is a reader of the last max bytes of the log.
func (s *Server) logEnd(max int64) io.Reader {
	if s.log == nil {
		return bytes.NewReader(nil)
	}
	st, err := s.log.Stat()
	if err != nil {
		return bytes.NewReader(nil)
	}
	off := st.Size() - max
	if off < 0 {
		off = 0
	}
	return io.NewSectionReader(s.log, off, st.Size()-off)
}
