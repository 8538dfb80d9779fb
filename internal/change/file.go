package change

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"redline/internal/cpuset"
	"redline/internal/kernfmt"
)

// Sysctls and files under /proc and /sys, compared in the value form each
// file uses.

// KernelPath checks that a file target is an absolute, clean path under
// /proc or /sys of a shape tune writes (allowedFile): tune writes nowhere
// else. internal/tune then resolves it on the machine without following
// links out of /proc or /sys.
func KernelPath(p string) error {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return fmt.Errorf("%q is not a clean absolute path (write it as /proc/... or /sys/...)", p)
	}
	if !strings.HasPrefix(p, "/proc/") && !strings.HasPrefix(p, "/sys/") {
		return fmt.Errorf("%q is outside /proc and /sys; tune writes only kernel files there", p)
	}
	return allowedFile(p)
}

// SysctlPath maps a sysctl name to its file. Dotted names use '.' as the
// separator ("net.core.somaxconn"); a name with '/' uses '/' instead, so
// interface names with dots stay expressible ("net/ipv4/conf/eth0.10/rp_filter").
func SysctlPath(name string) (string, error) {
	rel := name
	if !strings.Contains(name, "/") {
		rel = strings.ReplaceAll(name, ".", "/")
	}
	rel = strings.Trim(rel, "/")
	for _, part := range strings.Split(rel, "/") {
		if part == "" || part == "." || part == ".." {
			return "", fmt.Errorf("sysctl %q is not a valid name (use dotted form like net.core.somaxconn)", name)
		}
	}
	if err := allowedSysctl(rel); err != nil {
		return "", err
	}
	return "/proc/sys/" + rel, nil
}

func validateSysctl(c Change) error {
	p, err := SysctlPath(c.Target)
	if err != nil {
		return err
	}
	if err := deniedSysctl(strings.TrimPrefix(p, "/proc/sys/"), c.Value); err != nil {
		return err
	}
	if strings.TrimSpace(c.Value) == "" {
		return errors.New("empty value (a sysctl needs one)")
	}
	return validateSysctlValue(c.Target, c.Value)
}

func validateFile(c Change) error {
	if err := KernelPath(c.Target); err != nil {
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
		cpus, err := cpuset.ParseList(c.Value)
		if err == nil && cpus.IsEmpty() {
			err = errors.New("empty CPU list")
		}
		return err
	case formMask:
		_, err := cpuset.ParseMask(c.Value)
		return err
	}
	return nil
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

func sameFields(a, b string) bool { return kernfmt.Fields(a) == kernfmt.Fields(b) }

// listSysctls hold a set in the kernel's list notation ("1-3,8"): the
// kernel sorts and merges what is written ("8,1-3" reads back "1-3,8"), so
// two values are the same set, not the same text. Ports fit cpuset's
// bound (65536).
var listSysctls = map[string]bool{"net.ipv4.ip_local_reserved_ports": true}

func sameSysctl(c Change, a, b string) bool {
	if listSysctls[c.Target] {
		return sameCPUs(cpuset.ParseList, a, b)
	}
	return sameFields(a, b)
}

func sameFileValue(c Change, a, b string) bool {
	switch fileForm(c.Target) {
	case formList:
		return sameCPUs(cpuset.ParseList, a, b)
	case formMask:
		return sameCPUs(cpuset.ParseMask, a, b)
	}
	return choiceOrFields(a) == choiceOrFields(b)
}

func sameCPUs(parse func(string) (cpuset.Set, error), a, b string) bool {
	x, errA := parse(a)
	y, errB := parse(b)
	if errA != nil || errB != nil {
		return sameFields(a, b)
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

func showSysctl(v string) string { return showEmpty(kernfmt.Fields(v)) }

func showFileValue(c Change, v string) string {
	if fileForm(c.Target) != formMask {
		return showEmpty(strings.TrimSpace(v))
	}
	cpus, err := cpuset.ParseMask(v)
	if err != nil {
		return v
	}
	if cpus.IsEmpty() {
		return strings.TrimSpace(v) + " (none)"
	}
	return strings.TrimSpace(v) + " (cpus " + cpus.List() + ")"
}
