package host

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"strings"
	"syscall"
)

// ErrParse is wrapped by every error about a file's contents.
var ErrParse = errors.New("malformed")

// ParseError says which file and line did not parse. Line is 1-based; 0
// means the file as a whole.
type ParseError struct {
	Path string
	Line int
	Err  error
}

func (e *ParseError) Error() string {
	where := e.Path
	if where == "" {
		where = "input"
	}
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", where, e.Line)
	}
	return fmt.Sprintf("%s: %v", where, e.Err)
}

// Unwrap lets errors.Is find both ErrParse and the cause.
func (e *ParseError) Unwrap() []error { return []error{ErrParse, e.Err} }

// lineErr builds a ParseError for line n; the reader fills in the path.
func lineErr(n int, format string, args ...any) *ParseError {
	return &ParseError{Line: n, Err: fmt.Errorf(format, args...)}
}

// inFile names the file in a parser's error (parsers see only bytes).
func inFile(err error, path string) error {
	var pe *ParseError
	if errors.As(err, &pe) && pe.Path == "" {
		pe.Path = path
		return pe
	}
	if err != nil && pe == nil {
		return &ParseError{Path: path, Err: err}
	}
	return err
}

// SourceError is one probe's failure, kept in the snapshot (as
// node_exporter keeps a failed collector's status) so that one bad file
// never loses the rest of the snapshot.
type SourceError struct {
	Source string `json:"source"`         // the probe: "interrupts", "nic eth0", "process 1234"
	Path   string `json:"path,omitempty"` // the host file, when one is to blame
	Line   int    `json:"line,omitempty"` // 1-based line of a malformed file
	Error  string `json:"error"`
	// Kind is what went wrong, for readers of a saved snapshot: a file
	// that did not parse (KindParse), one the kernel refused to this user
	// (KindPermission), or "" for another read failure.
	Kind string `json:"kind,omitempty"`
}

// Kinds of SourceError.
const (
	KindParse      = "parse"
	KindPermission = "permission"
)

// Refused reports a file the kernel would not let this user read: not a
// fault of the host, and root can read it.
func (e SourceError) Refused() bool { return errors.Is(e.Err(), iofs.ErrPermission) }

// Err returns the failure as a typed error again (the snapshot keeps it as
// text, to be saved and sent): a *ParseError for a file that did not parse
// (also from a snapshot saved before Kind, which has its line), an error
// that is fs.ErrPermission for a refused one, else a plain error.
func (e SourceError) Err() error {
	switch {
	case e.Kind == KindParse || e.Kind == "" && e.Line > 0:
		return &ParseError{Path: e.Path, Line: e.Line, Err: errors.New(e.Error)}
	case e.Kind == KindPermission:
		return kindError{e.Error, iofs.ErrPermission}
	}
	return errors.New(e.Error)
}

// kindError is a message that errors.Is matches against its kind.
type kindError struct {
	msg  string
	kind error
}

func (e kindError) Error() string { return e.msg }
func (e kindError) Unwrap() error { return e.kind }

func sourceError(source string, err error) SourceError {
	se := SourceError{Source: source, Error: err.Error()}
	var pe *ParseError
	var pathErr *iofs.PathError
	switch {
	case errors.As(err, &pe):
		se.Path, se.Line, se.Kind = pe.Path, pe.Line, KindParse
	case errors.As(err, &pathErr):
		se.Path = pathErr.Path
	}
	if errors.Is(err, iofs.ErrPermission) {
		se.Kind = KindPermission
	}
	return se
}

// isAbsent reports errors that mean "this host has no such thing": the
// file does not exist (an older kernel, no cpufreq in a VM).
func isAbsent(err error) bool {
	return errors.Is(err, iofs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// isUnsupported reports errors with which the kernel refuses to read a file
// it lists: the attribute does not apply to this device (xps_cpus of a
// single-queue virtio NIC gives ENOENT, speed of a down link EINVAL).
func isUnsupported(err error) bool {
	for _, e := range []error{iofs.ErrNotExist, syscall.EINVAL, syscall.ENODEV, syscall.EOPNOTSUPP,
		syscall.ENODATA, syscall.EIO, syscall.ENXIO, syscall.EBUSY} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// permissionHint adds what the user can do to a permission error.
func permissionHint(err error) error {
	if errors.Is(err, iofs.ErrPermission) {
		if os.Geteuid() == 0 {
			return fmt.Errorf("%w (refused to root too: a container or a security module denies it)", err)
		}
		return fmt.Errorf("%w (run redline as root to read it)", err)
	}
	return err
}

// clip keeps error messages short when the input is huge.
func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// KindNotChecked marks what was not read on purpose, with why: a
// namespace's NICs when /sys could not be that namespace's.
const KindNotChecked = "not-checked"

// NICsNotChecked leaves s's NICs out, with the errors reading them, and
// records why once (Source "nics", Kind KindNotChecked): read from another
// network namespace through the host's /sys, every NIC /sys lists is one
// netlink does not know there, and each read of it failed.
func NICsNotChecked(s *Snapshot, why string) {
	s.NICs = nil
	kept := s.Errors[:0]
	for _, e := range s.Errors {
		if !strings.HasPrefix(e.Source, "nic ") && !strings.HasPrefix(e.Source, "addresses ") && !strings.HasPrefix(e.Source, "ethtool ") {
			kept = append(kept, e)
		}
	}
	s.Errors = append(kept, SourceError{Source: "nics", Error: why, Kind: KindNotChecked})
}
