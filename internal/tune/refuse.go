package tune

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"redline/internal/change"
)

// Refusal is a change tune will not (or cannot) make on this machine, with
// the reason. It is report-only, not a failure: the rest of the plan goes
// ahead. A missing file, a read-only /proc/sys (a container), no root, or an
// IRQ whose affinity the kernel will not move are refusals.
type Refusal struct {
	Reason string
	// Unchangeable is set when the kernel refused the write itself (EIO
	// from an IRQ that cannot move), so trying again will not help.
	Unchangeable bool
	Err          error
}

// Error is the reason, with the kernel's or server's error when there is one.
func (r *Refusal) Error() string {
	if r.Err != nil {
		return r.Reason + ": " + r.Err.Error()
	}
	return r.Reason
}

// Unwrap returns the underlying error (an errno, a server reply).
func (r *Refusal) Unwrap() error { return r.Err }

func refuse(reason string, err error) *Refusal { return &Refusal{Reason: reason, Err: err} }

// AsRefusal returns err's Refusal, if it is one.
func AsRefusal(err error) (*Refusal, bool) {
	var r *Refusal
	ok := errors.As(err, &r)
	return r, ok
}

// errnoRefusals say what each kernel refusal means for the user. Anything
// else (EINVAL above all) is a failure that rolls the apply back.
var errnoRefusals = []struct {
	errno  syscall.Errno
	reason string
}{
	{syscall.ENOENT, "missing on this host (kernel, driver or device lacks it)"},
	{syscall.EROFS, "read-only file system (a container with /proc/sys or /sys mounted read-only?): report only"},
	{syscall.EACCES, "permission denied (run as root)"},
	{syscall.EPERM, "not permitted (run as root, with CAP_SYS_ADMIN / CAP_SYS_NICE)"},
	{syscall.ESRCH, "process not running (the plan is stale: run tune plan again)"},
	{syscall.EOPNOTSUPP, "not supported by this device or driver"},
}

// classify turns an error from reading or writing c into a Refusal when it
// is one, and leaves it alone otherwise.
func classify(c change.Change, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := AsRefusal(err); ok {
		return err
	}
	if isIRQFile(c) && (errors.Is(err, syscall.EIO) || errors.Is(err, syscall.EPERM)) {
		// tuned and irqbalance both mark such IRQs unchangeable/unmanaged:
		// the kernel answers EPERM for IRQs whose affinity it manages
		// itself (irq_can_set_affinity_usr) and EIO when the interrupt
		// chip cannot move one. Writes reach here as root only.
		return &Refusal{Reason: "the kernel will not move this IRQ (" + errnoOf(err) + ": kernel-managed or fixed interrupt); marked unchangeable", Unchangeable: true, Err: err}
	}
	for _, r := range errnoRefusals {
		if errors.Is(err, r.errno) {
			return refuse(r.reason, err)
		}
	}
	return err
}

func isIRQFile(c change.Change) bool {
	return c.Kind == change.KindFile && strings.HasPrefix(c.Target, "/proc/irq/")
}

// mismatch is a read-back that differs from what was written.
func mismatch(c change.Change, wrote, got string) error {
	return fmt.Errorf("%s %s: wrote %q but read back %q (the kernel or server did not take the value)", c.Kind, c.Target, wrote, strings.TrimSpace(got))
}

func errnoOf(err error) string {
	if errors.Is(err, syscall.EPERM) {
		return "EPERM"
	}
	return "EIO"
}
