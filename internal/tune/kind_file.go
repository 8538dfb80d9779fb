package tune

import (
	"context"
	"errors"
	"path"
	"strings"

	"redline/internal/host"
	"redline/internal/tune/kernfmt"
)

// Sysctls and files under /proc and /sys: read, write and compare through
// System.FS, in the value form each file uses.

func init() {
	registerKind(KindSysctl, &kindOps{
		validate: validateSysctl,
		check:    func(_ context.Context, s *System, c Change) error { return checkFile(s, c) },
		read:     func(_ context.Context, s *System, c Change) (string, error) { return readFile(s, c) },
		write:    writeFile,
		same:     func(_ Change, a, b string) bool { return kernfmt.Fields(a) == kernfmt.Fields(b) },
		aux:      coupledAux,
		restore:  restoreCoupled,
		show:     func(_ Change, v string) string { return showEmpty(kernfmt.Fields(v)) },
		lostOn:   "reboot",
	})
	registerKind(KindFile, &kindOps{
		validate: validateFile,
		check:    func(_ context.Context, s *System, c Change) error { return checkFile(s, c) },
		read:     func(_ context.Context, s *System, c Change) (string, error) { return readFile(s, c) },
		write:    writeFile,
		same:     sameFileValue,
		show:     showFileValue,
		lostOn:   "reboot",
	})
}

// filePath is the kernel file a sysctl or file change writes.
func filePath(c Change) (string, error) {
	if c.Kind == KindSysctl {
		return sysctlPath(c.Target)
	}
	return c.Target, kernelPath(c.Target)
}

func validateSysctl(c Change) error {
	if _, err := sysctlPath(c.Target); err != nil {
		return err
	}
	if strings.TrimSpace(c.Value) == "" {
		return errors.New("empty value (a sysctl needs one)")
	}
	return nil
}

func validateFile(c Change) error {
	if err := kernelPath(c.Target); err != nil {
		return err
	}
	if strings.TrimSpace(c.Value) == "" {
		return errors.New("empty value")
	}
	return validateFileValue(c)
}

// validateFileValue catches values the kernel would reject with EINVAL, so
// a typo fails the plan before anything is written.
func validateFileValue(c Change) error {
	switch fileForm(c.Target) {
	case formList:
		cpus, err := host.ParseCPUList(c.Value)
		if err == nil && cpus.IsEmpty() {
			err = errors.New("empty CPU list")
		}
		return err
	case formMask:
		_, err := host.ParseCPUMask(c.Value)
		return err
	}
	return nil
}

func checkFile(s *System, c Change) error {
	p, err := filePath(c)
	if err != nil {
		return err
	}
	if err := s.requireRoot(); err != nil {
		return err
	}
	return classify(c, s.FS.CheckWrite(p))
}

func readFile(s *System, c Change) (string, error) {
	p, err := filePath(c)
	if err != nil {
		return "", err
	}
	b, err := s.FS.ReadFile(p)
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
func writeFile(_ context.Context, s *System, c Change, v string) error {
	p, err := filePath(c)
	if err != nil {
		return err
	}
	if _, sel, ok := kernfmt.Choices(v); ok {
		v = sel
	}
	return classify(c, s.FS.WriteFile(p, []byte(v+"\n")))
}

type form int

const (
	formFields form = iota // whitespace-separated values
	formList               // CPU list: smp_affinity_list, *_cpulist
	formMask               // hex CPU mask: smp_affinity, rps_cpus, xps_cpus
)

var maskFiles = map[string]bool{
	"smp_affinity": true, "default_smp_affinity": true, "rps_cpus": true,
	"xps_cpus": true, "xps_rxqs": true, "rps_default_mask": true,
}

func fileForm(target string) form {
	base := path.Base(target)
	switch {
	case strings.HasSuffix(base, "_list") || strings.HasSuffix(base, "cpulist"):
		return formList
	case maskFiles[base]:
		return formMask
	}
	return formFields
}

func sameFileValue(c Change, a, b string) bool {
	switch fileForm(c.Target) {
	case formList:
		return sameCPUs(host.ParseCPUList, a, b)
	case formMask:
		return sameCPUs(host.ParseCPUMask, a, b)
	}
	return choiceOrFields(a) == choiceOrFields(b)
}

func sameCPUs(parse func(string) (host.CPUSet, error), a, b string) bool {
	x, errA := parse(a)
	y, errB := parse(b)
	if errA != nil || errB != nil {
		return kernfmt.Fields(a) == kernfmt.Fields(b)
	}
	return x.Equal(y)
}

// choiceOrFields is the selected choice of "always [madvise] never", or
// the normalised fields of anything else.
func choiceOrFields(v string) string {
	if _, sel, ok := kernfmt.Choices(v); ok {
		return sel
	}
	return kernfmt.Fields(v)
}

// showEmpty makes an empty value visible.
func showEmpty(v string) string {
	if v == "" {
		return `""`
	}
	return v
}

func showFileValue(c Change, v string) string {
	if fileForm(c.Target) != formMask {
		return showEmpty(strings.TrimSpace(v))
	}
	cpus, err := host.ParseCPUMask(v)
	if err != nil {
		return v
	}
	if cpus.IsEmpty() {
		return strings.TrimSpace(v) + " (none)"
	}
	return strings.TrimSpace(v) + " (cpus " + cpus.List() + ")"
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

func coupledAux(_ context.Context, s *System, c Change) (map[string]string, error) {
	partner, ok := coupledSysctls[c.Target]
	if !ok {
		return nil, nil
	}
	v, err := readFile(s, Change{Kind: KindSysctl, Target: partner})
	if err != nil {
		return nil, err
	}
	return map[string]string{partner: v}, nil
}

// restoreCoupled restores old, or for a coupled pair whose old value was 0
// writes the partner's saved value (which zeroes ours in the kernel).
func restoreCoupled(ctx context.Context, s *System, c Change, old string, aux map[string]string) error {
	partner, ok := coupledSysctls[c.Target]
	partnerOld, saved := aux[partner]
	if ok && saved && strings.TrimSpace(old) == "0" && strings.TrimSpace(partnerOld) != "0" {
		return writeFile(ctx, s, Change{Kind: KindSysctl, Target: partner}, partnerOld)
	}
	return writeFile(ctx, s, c, old)
}
