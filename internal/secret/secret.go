// Package secret knows where passwords hide on redline's command lines and
// in the lines scenario files hold, and takes them out before anything is
// stored or printed. It is a leaf, so the renderers (report) can redact
// files written before redaction existed without linking the engines.
//
// Redact is the one place that decides what a secret looks like: -a and
// --password/--pass values (also -aPW, --pass=PW and a short-flag cluster
// ending in a, -qa PW), the password in a redis:// or rediss:// URI, and
// whatever follows an AUTH word (AUTH [user] password) or a credential
// directive (requirepass, masterauth, masteruser, the TLS key
// passphrases). ConfigValue is the same list for a server's own settings
// (CONFIG GET, redis.conf), which also hides the passwords of ACL user
// lines and Sentinel's auth-pass.
package secret

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"redline/internal/atomicfile"
	"redline/internal/shellwords"
)

// Marker replaces every secret.
const Marker = "REDACTED"

// EnvVar is the environment variable redis-cli and redis-benchmark read a
// password from; redline's commands read it too.
const EnvVar = "REDISCLI_AUTH"

// configSecrets are the redis.conf settings whose values are credentials
// (masteruser names the account masterauth logs in as; the TLS
// passphrases unlock the server's private keys); on a command line
// (redis-server --requirepass PW, "requirepass PW") the word after them
// is hidden. AUTH hides everything after it (AUTH [user] password,
// HELLO ... AUTH).
var configSecrets = map[string]bool{
	"requirepass": true, "masterauth": true, "masteruser": true,
	"tls-key-file-pass": true, "tls-client-key-file-pass": true,
}

// valueFlags are the long flags whose value is a password: redline's own
// and redis-server's for each of configSecrets.
var valueFlags = func() map[string]bool {
	m := map[string]bool{"--password": true, "--pass": true}
	for name := range configSecrets {
		m["--"+name] = true
	}
	return m
}()

// clusterBools are the boolean short flags that may precede -a in one
// cluster (-qa PW): bench's and doctor's.
const clusterBools = "qlIxev3"

// Redact returns a copy of argv with every password replaced by Marker.
func Redact(argv []string) []string {
	out := make([]string, len(argv))
	hideNext, hideRest := false, false
	for i, a := range argv {
		switch {
		case hideRest || hideNext:
			out[i], hideNext = Marker, false
			continue
		case strings.EqualFold(a, "AUTH"):
			hideRest = true
		case configSecrets[strings.ToLower(a)] || valueFlags[a]:
			hideNext = true
		}
		out[i] = a
		if v, ok := redactFlag(a); ok {
			out[i] = v
		} else if a == "-a" || isBoolCluster(a) {
			hideNext = true
		}
		out[i] = RedactURI(out[i])
	}
	return out
}

// redactFlag redacts a flag that carries its value: --pass=PW, -aPW.
func redactFlag(a string) (string, bool) {
	if name, _, ok := strings.Cut(a, "="); ok && valueFlags[name] {
		return name + "=" + Marker, true
	}
	if strings.HasPrefix(a, "-a") && len(a) > 2 && a[2] != '-' {
		return "-a" + Marker, true
	}
	return a, false
}

// isBoolCluster is -qa, -3la...: boolean short flags ending in a.
func isBoolCluster(a string) bool {
	if len(a) < 3 || a[0] != '-' || a[1] == '-' || a[len(a)-1] != 'a' {
		return false
	}
	return strings.Trim(a[1:len(a)-1], clusterBools) == ""
}

// ConfigValue is a server setting's value as redline may store, print
// or hand a session's client: Marker for a credential setting that is set
// (CONFIG GET requirepass, masterauth ...), an ACL user line
// ("user alice on >PW ~* +@all", in redis.conf) with its passwords and
// password hashes hidden, Sentinel's auth-pass and sentinel-pass with
// theirs; else value.
func ConfigValue(name, value string) string {
	name = strings.ToLower(name)
	switch {
	case value == "":
		return value
	case configSecrets[name]:
		return Marker
	case name == "user":
		f := strings.Fields(value)
		for i, w := range f {
			if i > 0 && strings.ContainsAny(w[:1], "><#!") {
				f[i] = w[:1] + Marker
			}
		}
		return strings.Join(f, " ")
	case name == "sentinel":
		f := strings.Fields(value)
		if len(f) > 1 && (strings.EqualFold(f[0], "auth-pass") || strings.EqualFold(f[0], "sentinel-pass")) {
			f[len(f)-1] = Marker
		}
		return strings.Join(f, " ")
	}
	return value
}

// RedactURI replaces the password of every redis:// or rediss:// URI in s
// (redis://user:PW@host, redis://PW@host) with Marker.
func RedactURI(s string) string {
	var b strings.Builder
	for {
		i := uriStart(s)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := i + strings.Index(s[i:], "//") + 2
		b.WriteString(s[:j])
		s = s[j:]
		end := strings.IndexAny(s, "/?# \t'\"")
		if end < 0 {
			end = len(s)
		}
		at := strings.LastIndexByte(s[:end], '@')
		if at < 0 {
			continue
		}
		user, _, hasPass := strings.Cut(s[:at], ":")
		if hasPass {
			b.WriteString(user + ":" + Marker)
		} else {
			b.WriteString(Marker) // redis://password@host
		}
		s = s[at:]
	}
}

func uriStart(s string) int {
	l := strings.ToLower(s)
	i, j := strings.Index(l, "redis://"), strings.Index(l, "rediss://")
	if i < 0 || (j >= 0 && j < i) {
		return j
	}
	return i
}

// RedactLine redacts a command line as a scenario file holds it (shell
// quoting, as in "redis-benchmark -a PW -t get"). A line without secrets
// comes back unchanged; one with secrets comes back re-quoted. A line that
// does not split (unbalanced quotes) is redacted word by word on spaces.
func RedactLine(line string) string {
	args, err := shellwords.Split(line)
	if err != nil {
		args = strings.Fields(line)
	}
	red := Redact(args)
	for i := range args {
		if red[i] != args[i] {
			return shellwords.Join(red)
		}
	}
	return line
}

// ReadFile reads a password from a file: its first line, without the line
// ending. An empty password is an error, so a wrong file is not silently
// no password.
func ReadFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return firstLine(b, path)
}

// ReadFileBeneath reads a password file a scenario names: rel, relative
// to dir (the scenario's directory) and resolved below it, symlinks
// included (openat2 RESOLVE_BENEATH), a regular file. A scenario is
// someone else's file: its password_file must not make redline (as root)
// send the first line of /etc/shadow as AUTH to the scenario's server.
// A password file given on the command line is read with ReadFile.
func ReadFileBeneath(dir, rel string) (string, error) {
	if filepath.IsAbs(rel) || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%s: a scenario's password_file is a path below the scenario's directory (or give --pass-file FILE on the command line)", rel)
	}
	d, err := openScenarioDir(dir)
	if err != nil {
		return "", fmt.Errorf("%s: %w (or give --pass-file FILE)", rel, err)
	}
	defer d.Close()
	fd, err := unix.Openat2(int(d.Fd()), rel, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return "", fmt.Errorf("%s: %w (a scenario's password_file must stay below the scenario's directory; or give --pass-file FILE)", rel, err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir, rel))
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s: not a regular file", rel)
	}
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return "", err
	}
	return firstLine(b, f.Name())
}

// openScenarioDir opens a scenario's directory. When another user could
// change the path to it (the scenario's owner, whose directory it is),
// it is resolved without following any link: that user could otherwise
// swap it for a link to /etc between reading the scenario and this open.
// A real directory of theirs holds only what they could put there.
func openScenarioDir(dir string) (*os.File, error) {
	if atomicfile.Unchangeable(dir) == nil {
		return os.Open(dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, abs, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS,
	})
	if err != nil {
		return nil, fmt.Errorf("the scenario's directory %s: %w (another user can change the path to it, so redline follows no link on it)", dir, err)
	}
	return os.NewFile(uintptr(fd), abs), nil
}

func firstLine(b []byte, path string) (string, error) {
	pw, _, _ := strings.Cut(string(b), "\n")
	pw = strings.TrimSuffix(pw, "\r")
	if pw == "" {
		return "", &emptyError{path}
	}
	return pw, nil
}

type emptyError struct{ path string }

func (e *emptyError) Error() string { return e.path + ": the password file is empty" }

// Resolve picks the password: the one given on the command line, else the
// first line of file, else env (the CLI passes $REDISCLI_AUTH, as redis-cli
// reads it; a scenario's workload lines pass ""), else none.
func Resolve(flag, file, env string) (string, error) {
	switch {
	case flag != "":
		return flag, nil
	case file != "":
		return ReadFile(file)
	}
	return env, nil
}

// FromEnv is $REDISCLI_AUTH.
func FromEnv() string { return os.Getenv(EnvVar) }

// NewPassword returns a random password (128 bits, hex) for a server
// redline starts where others may reach it, instead of opening it with
// protected-mode off.
func NewPassword() string {
	b := make([]byte, 16)
	rand.Read(b) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b)
}
