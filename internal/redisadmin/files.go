package redisadmin

// The server's own files, read through /proc/PID/root and /proc/PID/cwd so
// that a server in another mount namespace (a container) is read as it
// sees them. redis.conf lines look like
//
//	maxclients 10000
//	save 3600 1 300 100
//
// and start-up warnings in the log like
//
//	9726:M 29 Nov 2026 10:00:00.000 # WARNING: The TCP backlog setting of 511 cannot be enforced ...

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"redline/internal/secret"
)

// ConfFile is the redis.conf the server was started with, as directives
// (lower-case name to its arguments; a repeated directive keeps the last).
// It says what the operator asked for, where CONFIG GET says what the
// server runs with (Redis lowers maxclients when the fd limit is too low).
type ConfFile struct {
	Path       string            `json:"path"`
	Directives map[string]string `json:"directives"`
}

// parseConfFile reads redis.conf directives; "include" files are not
// followed.
func parseConfFile(r io.Reader) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		name, args, _ := strings.Cut(line, " ")
		name = strings.ToLower(name)
		out[name] = secret.ConfigValue(name, strings.TrimSpace(args))
	}
	return out
}

// serverPath maps a path as the server sees it to one this process can
// open: absolute paths through /proc/PID/root, relative ones through the
// server's working directory.
func serverPath(procRoot string, pid int, p string) string {
	base := filepath.Join(procRoot, strconv.Itoa(pid))
	if filepath.IsAbs(p) {
		return filepath.Join(base, "root", p)
	}
	return filepath.Join(base, "cwd", p)
}

// openServerFile opens p through the server's view, falling back to this
// process's view (when /proc/PID/root is not readable without root). The
// path is the server's word (INFO config_file, CONFIG GET logfile), and
// the server may be anyone's: the file is opened without following a
// final symlink, without blocking (a FIFO named as the config file hung
// the doctor and the root session for good), and only a regular file is
// read.
func openServerFile(procRoot string, pid int, p string) (*os.File, string, error) {
	f, err := openRegular(serverPath(procRoot, pid, p))
	if err == nil {
		return f, p, nil
	}
	if filepath.IsAbs(p) && !errors.Is(err, errNotRegular) {
		f2, err2 := openRegular(p)
		if err2 == nil {
			return f2, p, nil
		}
		if errors.Is(err2, errNotRegular) {
			err = err2
		}
	}
	return nil, p, err
}

var errNotRegular = errors.New("not a regular file (a server names its own config and log files; redline reads them only if they are files)")

func openRegular(p string) (*os.File, error) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %w", p, errNotRegular)
	}
	return os.NewFile(uintptr(fd), p), nil
}

// readConfFile reads the server's redis.conf; ok is false when it has none
// or it cannot be read.
func readConfFile(procRoot string, pid int, path string) (*ConfFile, error) {
	f, shown, err := openServerFile(procRoot, pid, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return &ConfFile{Path: shown, Directives: parseConfFile(io.LimitReader(f, 4<<20))}, nil
}

// logTailBytes bounds how much of the log is read: start-up warnings sit
// right after the banner, and a long-running server's log can be huge.
const logTailBytes = 512 << 10

// startMarker opens every start of the server in its log.
const startMarker = "Redis is starting"

// readLogWarnings returns the "# WARNING" lines that the current run of the
// server logged, read from the tail of its log file.
func readLogWarnings(procRoot string, pid int, path string) ([]string, error) {
	f, _, err := openServerFile(procRoot, pid, path)
	if err != nil {
		return nil, err
	}
	return logWarningsFrom(f, pid), nil
}

// logWarningsFrom reads the warnings of pid's last start from the tail of
// the open log f, and closes it.
func logWarningsFrom(f *os.File, pid int) []string {
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > logTailBytes {
		f.Seek(st.Size()-logTailBytes, io.SeekStart)
	}
	b, err := io.ReadAll(io.LimitReader(f, logTailBytes))
	if err != nil {
		return nil
	}
	return parseLogWarnings(string(b), pid)
}

// openServerStdout opens the file the server's standard output is, through
// its own descriptor (/proc/PID/fd/1: the object the server holds open, not
// a name anyone can change), when that is a regular file.
func openServerStdout(procRoot string, pid int) (*os.File, bool) {
	p := filepath.Join(procRoot, strconv.Itoa(pid), "fd", "1")
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, false
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, false
	}
	return os.NewFile(uintptr(fd), p), true
}

// parseLogWarnings picks the warning lines of the last start whose lines
// carry pid (a log file can hold several servers' runs).
func parseLogWarnings(log string, pid int) []string {
	prefix := strconv.Itoa(pid) + ":"
	var out []string
	for line := range strings.SplitSeq(log, "\n") {
		line = strings.TrimRight(line, "\r")
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		if strings.Contains(line, startMarker) {
			out = out[:0]
			continue
		}
		if _, msg, ok := strings.Cut(line, " # "); ok && isWarning(msg) {
			out = append(out, msg)
		}
	}
	return out
}

// warningWords pick, among the lines logged at warning level ("#"), the
// ones about the host or the configuration; banners such as "Redis is
// starting" and "Configuration loaded" are logged at the same level.
var warningWords = []string{"WARNING", "maxclients", "ulimit", "open files"}

func isWarning(msg string) bool {
	for _, w := range warningWords {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}
