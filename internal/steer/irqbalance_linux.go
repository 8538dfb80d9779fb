package steer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"redline/internal/atomicfile"
	"redline/internal/host"
)

// irqbalance (1.4 and later) listens on a unix socket,
// /run/irqbalance/irqbalance<PID>.sock, for root's commands (it checks
// SCM_CREDENTIALS): "setup" answers
//
//	SLEEP 10 IRQ 30 LOAD 0 DIFF 0 CLASS 5 BANNED 00000000
//
// listing the IRQs banned from balancing ("IRQ n ..."), and
// "settings ban irqs 30 31" replaces that list ("NONE" empties it). A
// banned IRQ's affinity is left as it is. Without a ban irqbalance moves
// any IRQ it balances when it rebalances, whatever steer wrote (it
// compares /proc/irq/N/smp_affinity only with its own choice), so steer
// bans exactly the IRQs it moves, and lifts exactly those bans again.

// irqbalanceSocketDir is where irqbalance makes its socket; when it
// cannot, it binds the abstract address whose name is all zero bytes
// (irqbalanceAbstract, in Go's notation).
const irqbalanceSocketDir = "/run/irqbalance"

var irqbalanceAbstract = "@" + strings.Repeat("\x00", 107)

// irqbalanceTimeout bounds one exchange with irqbalance.
const irqbalanceTimeout = 2 * time.Second

// IrqbalanceBan bans the IRQs steer moves in a running irqbalance, and
// lifts those bans (and only those) on Restore. Before a ban it records
// the IRQs it banned in StateDir (IrqbalanceJournal), so that after
// kill -9 the next steer lifts them (RecoverIrqbalance).
type IrqbalanceBan struct {
	PID      int
	StateDir string
	// Socket overrides the socket's path (tests).
	Socket string
	added  []int
	err    error
}

// IrqbalanceJournal is the file under the state dir recording the bans
// steer added to irqbalance.
const IrqbalanceJournal = "steer-irqbalance.json"

type irqbalanceRecord struct {
	PID    int    `json:"pid"`
	Socket string `json:"socket"`
	Added  []int  `json:"added"`
}

func (b *IrqbalanceBan) socket() string {
	if b.Socket != "" {
		return b.Socket
	}
	path := filepath.Join(irqbalanceSocketDir, "irqbalance"+strconv.Itoa(b.PID)+".sock")
	if _, err := os.Stat(path); err != nil {
		return irqbalanceAbstract
	}
	return path
}

// Ban adds irqs to irqbalance's banned IRQs. A failure is kept (Err) and
// returned; the moves go ahead (irqbalance moving one back is drift).
func (b *IrqbalanceBan) Ban(irqs []int) error {
	var fresh []int
	for _, irq := range irqs {
		if !slices.Contains(b.added, irq) {
			fresh = append(fresh, irq)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	banned, err := irqbalanceBanned(b.socket())
	if err != nil {
		b.err = err
		return err
	}
	var add []int
	for _, irq := range fresh {
		if !slices.Contains(banned, irq) { // already banned by someone else: not ours to lift
			add = append(add, irq)
		}
	}
	if len(add) == 0 {
		return nil
	}
	b.added = append(b.added, add...)
	if err := b.journal(); err != nil {
		b.added = b.added[:len(b.added)-len(add)]
		b.err = err
		return err
	}
	if err := irqbalanceSetBanned(b.socket(), append(banned, add...)); err != nil {
		b.err = err
		return err
	}
	return nil
}

func (b *IrqbalanceBan) journal() error {
	path := filepath.Join(b.StateDir, IrqbalanceJournal)
	if len(b.added) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := atomicfile.OwnDir(b.StateDir, 0o700); err != nil {
		return err
	}
	data, _ := json.Marshal(irqbalanceRecord{PID: b.PID, Socket: b.socket(), Added: b.added})
	return atomicfile.Write(path, data, 0o600)
}

// Restore lifts the bans Ban added, leaving any other ban as it is now.
func (b *IrqbalanceBan) Restore() (string, error) {
	if len(b.added) == 0 {
		if b.err != nil {
			return fmt.Sprintf("irqbalance (pid %d) runs; banning steered IRQs in it failed: %v", b.PID, b.err), nil
		}
		return fmt.Sprintf("irqbalance (pid %d) runs; steer banned no IRQ in it", b.PID), nil
	}
	msg, err := liftBans(b.socket(), b.PID, b.added)
	if err != nil {
		return msg, err
	}
	b.added = nil
	return msg, b.journal()
}

// liftBans removes irqs from irqbalance's banned IRQs; an irqbalance that
// is gone (restarted or stopped) has no bans left to lift.
func liftBans(socket string, pid int, irqs []int) (string, error) {
	banned, err := irqbalanceBanned(socket)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ECONNREFUSED) {
		return fmt.Sprintf("irqbalance (pid %d) is gone: its bans of IRQs %s went with it", pid, intList(irqs)), nil
	}
	if err != nil {
		return "", err
	}
	keep := slices.DeleteFunc(banned, func(irq int) bool { return slices.Contains(irqs, irq) })
	if err := irqbalanceSetBanned(socket, keep); err != nil {
		return "", err
	}
	return fmt.Sprintf("irqbalance (pid %d): banned IRQs %s while steer moved them, bans lifted", pid, intList(irqs)), nil
}

// RecoverIrqbalance lifts the irqbalance bans an earlier steer left (it
// was killed before it could); "" when there were none.
func RecoverIrqbalance(stateDir string) (string, error) {
	path := filepath.Join(stateDir, IrqbalanceJournal)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var rec irqbalanceRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return "", fmt.Errorf("%s: %w (remove it once irqbalance's bans are as they should be)", path, err)
	}
	msg, err := liftBans(rec.Socket, rec.PID, rec.Added)
	if err != nil {
		return "", err
	}
	return msg, os.Remove(path)
}

// irqbalanceBanned asks irqbalance for its banned IRQs.
func irqbalanceBanned(socket string) ([]int, error) {
	reply, err := irqbalanceSend(socket, "setup", true)
	if err != nil {
		return nil, err
	}
	return parseIrqbalanceSetup(reply)
}

func irqbalanceSetBanned(socket string, irqs []int) error {
	cmd := "settings ban irqs NONE"
	if len(irqs) > 0 {
		cmd = "settings ban irqs " + intList(irqs)
	}
	_, err := irqbalanceSend(socket, cmd, false)
	return err
}

// parseIrqbalanceSetup returns the IRQs of a "setup" reply.
func parseIrqbalanceSetup(reply string) ([]int, error) {
	f := strings.Fields(reply)
	if len(f) < 2 || f[0] != "SLEEP" {
		return nil, fmt.Errorf("irqbalance's setup reply %q: want SLEEP n [IRQ n LOAD n DIFF n CLASS n]... BANNED mask", reply)
	}
	var irqs []int
	for i := 0; i+1 < len(f); i++ {
		if f[i] != "IRQ" {
			continue
		}
		n, err := strconv.Atoi(f[i+1])
		if err != nil {
			return nil, fmt.Errorf("irqbalance's setup reply: IRQ %q", f[i+1])
		}
		irqs = append(irqs, n)
	}
	return irqs, nil
}

// irqbalanceSend sends one command with root's credentials, as
// irqbalance-ui does, and reads the reply when one is expected.
func irqbalanceSend(socket, cmd string, reply bool) (string, error) {
	d := net.Dialer{Timeout: irqbalanceTimeout}
	c, err := d.Dial("unix", socket)
	if err != nil {
		return "", fmt.Errorf("irqbalance's socket: %w", err)
	}
	defer c.Close()
	uc := c.(*net.UnixConn)
	if err := peerIsUs(uc); err != nil {
		return "", fmt.Errorf("irqbalance's socket %q: %w", strings.TrimRight(socket, "\x00"), err)
	}
	uc.SetDeadline(time.Now().Add(irqbalanceTimeout))
	creds := unix.UnixCredentials(&unix.Ucred{Pid: int32(os.Getpid()), Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid())})
	if _, _, err := uc.WriteMsgUnix([]byte(cmd), creds, nil); err != nil {
		return "", fmt.Errorf("irqbalance's socket: %q: %w", cmd, err)
	}
	if !reply {
		return "", nil
	}
	b, err := io.ReadAll(uc)
	if err != nil {
		return "", fmt.Errorf("irqbalance's socket: %q: %w", cmd, err)
	}
	return string(b), nil
}

// peerIsUs refuses a socket whose other end is not root (or this
// process's own user): irqbalance's fallback is an abstract address, which
// any user may bind first and then be told which IRQs steer moves, and
// answer with a ban list of their choosing.
func peerIsUs(c *net.UnixConn) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if credErr != nil {
		return credErr
	}
	if cred.Uid != 0 && int(cred.Uid) != os.Geteuid() {
		return fmt.Errorf("served by uid %d (pid %d), not by root's irqbalance; not used", cred.Uid, cred.Pid)
	}
	return nil
}

func intList(irqs []int) string {
	s := make([]string, len(irqs))
	for i, n := range irqs {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, " ")
}

// IrqbalanceFor returns the ban for the snapshot's running irqbalance,
// nil when none runs.
func IrqbalanceFor(snap *host.Snapshot, stateDir string) *IrqbalanceBan {
	if !snap.Irqbalance.Running || len(snap.Irqbalance.PIDs) == 0 {
		return nil
	}
	return &IrqbalanceBan{PID: snap.Irqbalance.PIDs[0], StateDir: stateDir}
}
