package tune

import (
	"context"
	"strings"

	"redline/internal/change"
	"redline/internal/tune/kernfmt"
)

// Sysctls and files under /proc and /sys: read, write and compare through
// System.FS, in the value form each file uses.

func init() {
	registerKind(change.KindSysctl, &kindOps{
		check:   func(_ context.Context, s *System, c change.Change) error { return checkFile(s, c) },
		read:    func(_ context.Context, s *System, c change.Change) (string, error) { return readFile(s, c) },
		write:   writeFile,
		aux:     coupledAux,
		restore: restoreCoupled,
	})
	registerKind(change.KindFile, &kindOps{
		check: func(_ context.Context, s *System, c change.Change) error { return checkFile(s, c) },
		read:  func(_ context.Context, s *System, c change.Change) (string, error) { return readFile(s, c) },
		write: writeFile,
	})
}

// filePath is the kernel file a sysctl or file change writes.
func filePath(c change.Change) (string, error) {
	if c.Kind == change.KindSysctl {
		return change.SysctlPath(c.Target)
	}
	return c.Target, change.KernelPath(c.Target)
}

// Reads and writes of /proc/sys/net happen in the system's network
// namespace (inNetNS): it shows the namespace of the thread that opens it.
// Everything else there is the host's, whichever namespace reads it.

// inNetNSFor runs fn in s's network namespace when p belongs to one.
func inNetNSFor(s *System, p string, fn func() error) error {
	if !strings.HasPrefix(p, "/proc/sys/net/") {
		return fn()
	}
	return s.inNetNS(fn)
}

func checkFile(s *System, c change.Change) error {
	p, err := filePath(c)
	if err != nil {
		return err
	}
	if err := s.requireRoot(); err != nil {
		return err
	}
	return classify(c, inNetNSFor(s, p, func() error { return s.FS.CheckWrite(p) }))
}

func readFile(s *System, c change.Change) (string, error) {
	p, err := filePath(c)
	if err != nil {
		return "", err
	}
	var b []byte
	err = inNetNSFor(s, p, func() (err error) {
		b, err = s.FS.ReadFile(p)
		return err
	})
	if err != nil {
		return "", classify(c, err)
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

// writeFile writes v as echo would, with a newline: a zero-length write
// is a no-op in procfs, so restoring an empty value (an empty
// ip_local_reserved_ports) needs the newline. A bracketed choice list (an
// old THP value as read) is written as its selected choice, which is what
// the kernel accepts.
func writeFile(_ context.Context, s *System, c change.Change, v string) error {
	p, err := filePath(c)
	if err != nil {
		return err
	}
	if _, sel, ok := kernfmt.Choices(v); ok {
		v = sel
	}
	return classify(c, inNetNSFor(s, p, func() error { return s.FS.WriteFile(p, []byte(v+"\n")) }))
}

// coupledSysctls are the dirty-writeback pairs of which the kernel keeps
// only one non-zero: writing one zeroes the other, and the bytes forms
// reject 0. Restoring "dirty_bytes = 0" must therefore write the saved
// dirty_ratio instead (tuned PR #882 failed here with EINVAL).
var coupledSysctls = map[string]string{
	"vm.dirty_bytes":            "vm.dirty_ratio",
	"vm.dirty_ratio":            "vm.dirty_bytes",
	"vm.dirty_background_bytes": "vm.dirty_background_ratio",
	"vm.dirty_background_ratio": "vm.dirty_background_bytes",
}

func coupledAux(_ context.Context, s *System, c change.Change) (map[string]string, error) {
	partner, ok := coupledSysctls[c.Target]
	if !ok {
		return nil, nil
	}
	v, err := readFile(s, change.Change{Kind: change.KindSysctl, Target: partner})
	if err != nil {
		return nil, err
	}
	return map[string]string{partner: v}, nil
}

// restoreCoupled restores old, or for a coupled pair whose old value was 0
// writes the partner's saved value (which zeroes ours in the kernel).
func restoreCoupled(ctx context.Context, s *System, c change.Change, old string, aux map[string]string) error {
	partner, ok := coupledSysctls[c.Target]
	partnerOld, saved := aux[partner]
	if ok && saved && strings.TrimSpace(old) == "0" && strings.TrimSpace(partnerOld) != "0" {
		return writeFile(ctx, s, change.Change{Kind: change.KindSysctl, Target: partner}, partnerOld)
	}
	return writeFile(ctx, s, c, old)
}
