package change

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// KindPersist writes a file that makes other changes survive a reboot: a
// sysctl.d drop-in, the boot plan and the systemd unit that re-applies it
// (redline tune persist). Target is the file's absolute path as on the
// host, one of persistShapes; Value is its whole content, or, for the
// unit's link in a .wants directory, PersistLinkPrefix and the link's
// target. The empty value is "no such file": rollback removes a file that
// was not there before.
const KindPersist Kind = "persist-file"

// PersistLinkPrefix starts the value of a persist-file that is a symbolic
// link (systemctl enable's link).
const PersistLinkPrefix = "symlink:"

// persistShapes are the only files persist writes, all redline's own.
var persistShapes = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`^/etc/sysctl\.d/[0-9]{2}-redline[a-z0-9-]*\.conf$`),
		regexp.MustCompile(`^/etc/redline/boot-plan[a-z0-9-]*\.yaml$`),
		regexp.MustCompile(`^/etc/systemd/system/redline-boot[a-z0-9-]*\.service$`),
		regexp.MustCompile(`^/etc/systemd/system/multi-user\.target\.wants/redline-boot[a-z0-9-]*\.service$`),
	}
})

// PersistPath reports why persist will not write p, or nil.
func PersistPath(p string) error {
	for _, re := range persistShapes() {
		if re.MatchString(p) && !hasDotSegment(p) {
			return nil
		}
	}
	return fmt.Errorf("%q is not a file persist writes (/etc/sysctl.d/NN-redline*.conf, /etc/redline/boot-plan*.yaml, /etc/systemd/system/redline-boot*.service and its multi-user.target.wants link)", p)
}

func validatePersist(c Change) error {
	if err := PersistPath(c.Target); err != nil {
		return err
	}
	if strings.HasPrefix(c.Value, PersistLinkPrefix) {
		to := strings.TrimPrefix(c.Value, PersistLinkPrefix)
		if !strings.HasPrefix(c.Target, "/etc/systemd/system/multi-user.target.wants/") || PersistPath(to) != nil {
			return errors.New("a link is only the boot unit's, in multi-user.target.wants, to the unit")
		}
	}
	if strings.ContainsRune(c.Value, 0) {
		return errors.New("a NUL byte in the content")
	}
	switch {
	case c.Value == "" || strings.HasPrefix(c.Value, PersistLinkPrefix):
		return nil
	case strings.HasPrefix(c.Target, "/etc/sysctl.d/"):
		return validateDropIn(c.Value)
	case strings.HasPrefix(c.Target, "/etc/systemd/system/redline-boot"):
		_, err := BootUnitBinary(c.Value)
		return err
	}
	return nil
}

// validateDropIn accepts a sysctl.d file of comments and "name = value"
// lines whose sysctls tune may write: a drop-in is loaded as root at
// boot, and kernel.core_pattern there would run a program.
func validateDropIn(v string) error {
	for i, line := range strings.Split(v, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, ";") {
			continue
		}
		name, val, ok := strings.Cut(t, "=")
		if !ok {
			return fmt.Errorf("line %d is not name = value", i+1)
		}
		sc := Change{Kind: KindSysctl, Target: strings.TrimSpace(name), Value: strings.TrimSpace(val)}
		err := validateChars(sc)
		if err == nil {
			err = validateSysctl(sc)
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", i+1, err)
		}
	}
	return nil
}

// bootUnitLines are the boot unit's lines but ExecStart (tune.bootUnit
// writes them; a plan may carry no other unit).
var bootUnitLines = map[string]bool{
	"# written by redline tune persist; redline tune rollback removes it": true,
	"[Unit]": true, "Description=redline: apply the persisted tuning plan at boot": true,
	"After=network-online.target irqbalance.service": true, "Wants=network-online.target": true,
	"": true, "[Service]": true, "Type=oneshot": true, "RemainAfterExit=yes": true,
	"[Install]": true, "WantedBy=multi-user.target": true,
}

var bootExec = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^ExecStart=(/[^\s]+) tune apply --boot (/etc/redline/boot-plan[a-z0-9-]*\.yaml)( --state-dir /[^\s]+)?$`)
})

// BootUnitBinary checks a boot unit's content (the fixed lines, and one
// ExecStart of redline's boot apply) and returns the program it runs: a
// unit runs as root at every boot, so nothing else may be in it. Whether
// that program is this redline is the machine's question (tune checks it).
func BootUnitBinary(v string) (string, error) {
	bin := ""
	for i, line := range strings.Split(v, "\n") {
		if bootUnitLines[line] {
			continue
		}
		m := bootExec().FindStringSubmatch(line)
		if m == nil || bin != "" {
			return "", fmt.Errorf("line %d %q is not one of the boot unit's (redline tune persist writes it)", i+1, line)
		}
		bin = m[1]
	}
	if bin == "" {
		return "", errors.New("the boot unit runs nothing (no ExecStart of redline tune apply --boot)")
	}
	return bin, nil
}

func showPersist(_ Change, v string) string {
	switch {
	case v == "":
		return "(no file)"
	case strings.HasPrefix(v, PersistLinkPrefix):
		return "link to " + strings.TrimPrefix(v, PersistLinkPrefix)
	}
	n := strings.Count(strings.TrimSuffix(v, "\n"), "\n") + 1
	return fmt.Sprintf("%d line(s)", n)
}
