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
	return nil
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
