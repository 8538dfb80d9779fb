package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"redline/internal/shellwords"
	"redline/internal/trusted"
)

// SSH is how to reach the server host: the system's OpenSSH client with
// the user's configuration, agent, jump hosts and known_hosts. A master
// connection (ControlMaster) is shared by every step, so a lab opens one
// connection, not one per operation.
type SSH struct {
	// Target is what the user types after ssh: host, user@host, or a
	// Host alias of ~/.ssh/config.
	Target string
	// Config is an ssh_config file (ssh -F); empty uses the user's.
	Config string
	// Options are extra -o settings ("Port=2222").
	Options []string
	// Wrap is a command prefix for ssh (tests run it in a namespace).
	Wrap []string
	// ControlDir holds the master connection's socket; a per-user
	// directory under the temporary directory when empty.
	ControlDir string
}

// command builds an ssh command running remote (a shell command line).
func (s *SSH) command(ctx context.Context, remote string) *exec.Cmd {
	argv := append(append([]string{}, s.Wrap...), "ssh")
	if s.Config != "" {
		argv = append(argv, "-F", s.Config)
	}
	argv = append(argv, "-o", "BatchMode=yes", "-o", "ControlMaster=auto", "-o", "ControlPersist=60",
		"-o", "ControlPath="+filepath.Join(s.controlDir(), "%C"), "-o", "ServerAliveInterval=15")
	for _, o := range s.Options {
		argv = append(argv, "-o", o)
	}
	argv = append(argv, "-T", "--", s.Target, remote)
	cmd := trustedCommand(ctx, argv, len(s.Wrap))
	// Its own process group keeps a terminal's Ctrl-C from killing ssh
	// (and so the session, which would then clean up by itself) before
	// the lab has rolled back in order; if redline dies, ssh's input
	// ends and the session's switch does the rest.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

func (s *SSH) controlDir() string {
	if s.ControlDir != "" {
		return s.ControlDir
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("redline-ssh-%d", os.Getuid()))
}

// run runs remote with stdin and returns its standard output; an ssh
// failure (exit 255: unreachable, host key, authentication) is an error
// quoting ssh's own message.
func (s *SSH) run(ctx context.Context, remote string, stdin io.Reader) (string, error) {
	cmd := s.command(ctx, remote)
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), s.sshError(err, errb.String())
	}
	return out.String(), nil
}

func (s *SSH) sshError(err error, stderr string) error {
	msg := strings.TrimSpace(stderr)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 255 {
		return fmt.Errorf("ssh %s: %s (check that `ssh %s` works on its own: host key, key or agent, user)", s.Target, orErr(msg, err), s.Target)
	}
	return fmt.Errorf("ssh %s: %w: %s", s.Target, err, msg)
}

func orErr(msg string, err error) string {
	if msg == "" {
		return err.Error()
	}
	return msg
}

// Stop ends the master connection (ssh -O exit).
func (s *SSH) Stop() {
	argv := append(append([]string{}, s.Wrap...), "ssh")
	if s.Config != "" {
		argv = append(argv, "-F", s.Config)
	}
	argv = append(argv, "-o", "ControlPath="+filepath.Join(s.controlDir(), "%C"), "-O", "exit", "--", s.Target)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = trustedCommand(ctx, argv, len(s.Wrap)).Run()
}

// trustedCommand runs argv with its programs (the wrapper's first, and
// ssh at argv[sshAt], which a wrapper such as ip netns exec would look up
// by name) resolved by trusted.Program: as root, from root's system
// directories only, never from a PATH a user may have reached.
func trustedCommand(ctx context.Context, argv []string, sshAt int) *exec.Cmd {
	argv = append([]string{}, argv...)
	var err error
	for _, i := range []int{0, sshAt} {
		var p string
		if p, err = trusted.Program(argv[i]); err != nil {
			break
		}
		argv[i] = p
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if err != nil {
		cmd.Err = err
	}
	return cmd
}

// DialOptions say how to open a session.
type DialOptions struct {
	SSH SSH
	// Version is this redline's version; the remote one must match.
	Version string
	// LocalBinary is what a push copies (this executable when empty). It
	// must be a static Linux binary for the remote architecture.
	LocalBinary string
	// RemoteBinary is the redline the session runs when the cache has no
	// copy of LocalBinary ("redline" from the remote PATH when empty).
	RemoteBinary string
	// CacheDir is the remote per-user cache of pushed binaries; relative
	// paths are below the remote $HOME (".cache/redline" when empty).
	CacheDir string
	// NoPush refuses, instead of copying the binary, when the remote
	// redline is missing or of another version.
	NoPush bool
	// Sudo runs the session as root with `sudo -n` (see docs/remote.md for
	// the sudoers line); the binary is then never pushed.
	Sudo bool
	// StateDir is the remote journal directory (the session's default
	// when empty).
	StateDir string
	// HeartbeatTimeout is how long the session waits for the client
	// before it rolls back by itself; DefaultHeartbeatTimeout when zero.
	HeartbeatTimeout time.Duration
	// DeadAfter is the client's (Client.DeadAfter); zero waits for ssh
	// to notice a dead link.
	DeadAfter time.Duration
	// Cleanup names an earlier session whose cleanup report the client
	// waits for (HelloArgs.Cleanup).
	Cleanup string
	// Notify, when set, is told what Dial does that the user should know
	// (a push).
	Notify func(string)
	// Stderr receives the session's log and ssh's messages (discarded
	// when nil).
	Stderr io.Writer
}

// Dial checks the link (host key and authentication fail here, before
// anything runs remotely), starts a session and says hello. When the
// remote redline is missing or another version, it pushes LocalBinary to
// the cache (unless NoPush or Sudo) and starts that instead.
func Dial(ctx context.Context, o DialOptions) (*Client, error) {
	release, err := o.SSH.ownControlDir()
	if err != nil {
		return nil, fmt.Errorf("ssh control directory: %w", err)
	}
	c, err := dial(ctx, o)
	if err != nil {
		o.SSH.Stop()
		release()
		return nil, err
	}
	closeFn := c.closeFn
	c.closeFn = func() error {
		err := closeFn()
		release()
		return err
	}
	return c, nil
}

// ownControlDir gives the connection a master socket directory of its
// own (unless the caller chose one), so that ending this client's master
// (Stop, when it closes) never ends another redline's sessions to the
// same host. release removes it.
func (s *SSH) ownControlDir() (release func(), err error) {
	if err := privateDir(s.controlDir()); err != nil {
		return nil, err
	}
	if s.ControlDir != "" {
		return func() {}, nil
	}
	d, err := os.MkdirTemp(s.controlDir(), "c")
	if err != nil {
		return nil, err
	}
	s.ControlDir = d
	return func() { os.RemoveAll(d) }, nil
}

func dial(ctx context.Context, o DialOptions) (*Client, error) {
	arch, err := o.SSH.run(ctx, "uname -sm", nil)
	if err != nil {
		return nil, err
	}
	bin, archErr := binaryFor(o.LocalBinary, arch)
	if archErr != nil {
		bin = o.LocalBinary // the host may still have this version on its PATH
	}
	local, sum, err := localBinary(bin)
	if err != nil {
		return nil, err
	}
	cached := cachePath(o.CacheDir, sum)
	c, verr := start(ctx, o, sessionCommand(o, cached, sum))
	if verr == nil {
		return c, nil
	}
	if o.NoPush || o.Sudo {
		return nil, fmt.Errorf("%w; install redline %s on %s (--no-push or sudo: not copied)", verr, o.Version, o.SSH.Target)
	}
	if archErr != nil {
		return nil, fmt.Errorf("%w; cannot push to %s: %v", verr, o.SSH.Target, archErr)
	}
	if o.Notify != nil {
		o.Notify(fmt.Sprintf("%v; copying this redline (sha256 %s) to %s:%s", verr, sum[:12], o.SSH.Target, cacheDisplay(o.CacheDir, sum)))
	}
	if err := push(ctx, &o.SSH, local, cached, sum); err != nil {
		return nil, err
	}
	c, err = start(ctx, o, sessionCommand(o, cached, sum))
	if err != nil {
		return nil, fmt.Errorf("after the push: %w", err)
	}
	return c, nil
}

// start runs the session command and says hello; a session that is
// missing or of another version is an error saying so.
func start(ctx context.Context, o DialOptions, remote string) (*Client, error) {
	cmd := o.SSH.command(context.Background(), remote)
	return startSession(ctx, cmd, sessionStart{
		version: o.Version, heartbeat: o.HeartbeatTimeout, deadAfter: o.DeadAfter, stderr: o.Stderr, where: o.SSH.Target, cleanup: o.Cleanup,
		closed:   o.SSH.Stop, // the master would linger for ControlPersist
		startErr: func(err error) error { return fmt.Errorf("ssh: %w", err) },
		helloErr: func(err error, stderr string) error { return versionError(err, cmd, stderr, o.SSH.Target) },
	})
}

// sessionStart says how to start a session's command (startSession).
type sessionStart struct {
	version              string
	heartbeat, deadAfter time.Duration
	stderr               io.Writer // a copy of the command's stderr; nil discards
	where                string    // the host, in messages
	cleanup              string    // an earlier session whose cleanup report hello waits for
	// closed, when set, runs after the command has exited on Close.
	closed func()
	// startErr and helloErr word a failure to start the command and to
	// say hello (given the tail of its stderr).
	startErr func(error) error
	helloErr func(err error, stderr string) error
	// exitErr, when set, words the end of the command's output (a killed
	// process) for the client's calls, given how it exited and the tail
	// of its stderr.
	exitErr func(state *os.ProcessState, stderr string) error
}

// startSession runs cmd, a session on its stdin and stdout (ssh to a host,
// or this binary on this host), and says hello. Close ends its input and
// waits up to 10 s for it to exit, then kills it.
func startSession(ctx context.Context, cmd *exec.Cmd, o sessionStart) (*Client, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var errb tailBuffer
	cmd.Stderr = io.MultiWriter(&errb, orDiscard(o.stderr))
	if err := cmd.Start(); err != nil {
		return nil, o.startErr(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	closeFn := func() error {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if o.closed != nil {
			o.closed()
		}
		return nil
	}
	var out io.Reader = stdout
	if o.exitErr != nil {
		out = &exitReader{r: stdout, exited: exited, err: func() error { return o.exitErr(cmd.ProcessState, errb.String()) }}
	}
	c := NewClient(out, stdin, closeFn)
	c.kill = func() { cmd.Process.Kill() }
	c.DeadAfter = o.deadAfter
	hctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := c.HandshakeFor(hctx, o.version, o.heartbeat, 0, o.cleanup); err != nil {
		c.Close()
		if IsVersionMismatch(err) {
			return nil, fmt.Errorf("redline on %s: %w", o.where, err)
		}
		return nil, o.helloErr(err, errb.String())
	}
	return c, nil
}

// exitReader is a session's output that, at its end, says how the
// session's process ended (when it ended within exitWait).
type exitReader struct {
	r      io.Reader
	exited <-chan struct{}
	err    func() error
}

// exitWait bounds how long the end of a session's output waits for its
// process's exit status.
const exitWait = 5 * time.Second

func (e *exitReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	// cmd.Wait closes the output pipe once the process has ended, so a
	// read that races it ends in os.ErrClosed instead of io.EOF: the same
	// end of the output, to be worded by how the process ended.
	if err != io.EOF && !errors.Is(err, os.ErrClosed) {
		return n, err
	}
	t := time.NewTimer(exitWait)
	defer t.Stop()
	select {
	case <-e.exited:
		if xerr := e.err(); xerr != nil {
			return n, xerr
		}
	case <-t.C:
	}
	return n, err
}

func versionError(err error, cmd *exec.Cmd, stderr, target string) error {
	if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 255 {
		return fmt.Errorf("ssh %s: %s", target, orErr(strings.TrimSpace(stderr), err))
	}
	if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 127 {
		return fmt.Errorf("no redline on %s", target)
	}
	return fmt.Errorf("no redline session on %s: %v: %s", target, err, strings.TrimSpace(stderr))
}

// sessionCommand runs the cached copy of this binary when it is there and
// intact, else the remote redline.
func sessionCommand(o DialOptions, cached, sum string) string {
	args := " session"
	if o.StateDir != "" {
		args += " --state-dir " + shellwords.Quote(o.StateDir)
	}
	if o.Sudo {
		return "exec sudo -n " + shellwords.Quote(orDefault(o.RemoteBinary, "redline")) + args
	}
	return fmt.Sprintf(`p=%s; if [ -x "$p" ] && [ "$(sha256sum < "$p" | cut -d" " -f1)" = %s ]; then exec "$p"%s; fi; exec %s%s`,
		cached, sum, args, shellwords.Quote(orDefault(o.RemoteBinary, "redline")), args)
}

// push copies the binary into the cache through the ssh channel, verifies
// its checksum there, and only then gives it its name.
func push(ctx context.Context, s *SSH, local, cached, sum string) error {
	f, err := os.Open(local)
	if err != nil {
		return err
	}
	defer f.Close()
	script := fmt.Sprintf(`set -e; umask 077; p=%s; mkdir -p "$(dirname "$p")"; t="$p.tmp.$$"; cat > "$t"; s=$(sha256sum < "$t" | cut -d" " -f1); if [ "$s" != %s ]; then rm -f "$t"; echo "checksum mismatch: got $s" >&2; exit 3; fi; chmod 700 "$t"; mv -f "$t" "$p"`,
		cached, sum)
	if _, err := s.run(ctx, script, f); err != nil {
		return fmt.Errorf("push redline to %s: %w", s.Target, err)
	}
	return nil
}

// cachePath is the remote path of a pushed binary, as a shell word ($HOME
// expanded remotely for a relative cache).
func cachePath(dir, sum string) string {
	if dir == "" {
		dir = ".cache/redline"
	}
	p := shellwords.Quote(filepath.Join(dir, "redline-"+sum))
	if !filepath.IsAbs(dir) {
		p = `"$HOME"/` + p
	}
	return p
}

func cacheDisplay(dir, sum string) string {
	if dir == "" {
		dir = ".cache/redline"
	}
	if !filepath.IsAbs(dir) {
		dir = "~/" + dir
	}
	return dir + "/redline-" + sum
}

// privateDir makes dir (mode 0700) or checks that the one there is ours
// and private: another user's directory would let them reach our master
// connection's socket.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !st.IsDir() || !ok || int(sys.Uid) != os.Getuid() || st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is not a private directory of this user (remove it)", dir)
	}
	return nil
}

func localBinary(path string) (string, string, error) {
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", "", fmt.Errorf("find this redline's binary: %w", err)
		}
		path = exe
	}
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", "", err
	}
	return path, hex.EncodeToString(h.Sum(nil)), nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// tailBuffer keeps the last few KiB written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }
