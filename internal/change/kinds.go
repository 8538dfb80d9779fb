package change

import (
	"strings"

	"redline/internal/secret"
)

// semantics is what one Kind means, apart from the machine.
type semantics struct {
	// validate checks a change's target and value.
	validate func(c Change) error
	// same compares two values in their normal form.
	same func(c Change, a, b string) bool
	// show formats a value for people; nil shows it as it is.
	show func(c Change, v string) string
	// lostOn names what undoes the change without redline.
	lostOn string
}

// kinds is every Kind's semantics. internal/tune keys its effects by the
// same Kinds, and a test there requires one for each.
var kinds = map[Kind]semantics{
	KindSysctl: {
		validate: validateSysctl,
		same:     sameSysctl,
		show:     func(_ Change, v string) string { return showSysctl(v) },
		lostOn:   "reboot",
	},
	KindFile: {
		validate: validateFile,
		same:     sameFileValue,
		show:     showFileValue,
		lostOn:   "reboot",
	},
	KindRedisConfig: {
		validate: validateRedisConfig,
		same:     sameRedisValue,
		show:     func(c Change, v string) string { return secret.ConfigValue(c.Target, v) },
		lostOn:   "Redis restart (unless written to redis.conf with CONFIG REWRITE)",
	},
	KindAffinity: {
		validate: validateAffinity,
		same:     func(_ Change, a, b string) bool { return sameAffinity(a, b) },
		lostOn:   "process exit",
	},
	KindService: {
		validate: validateService,
		same:     func(_ Change, a, b string) bool { return ServiceState(a) == ServiceState(b) },
		lostOn:   "reboot (an enabled unit starts again)",
	},
	KindPersist: {
		validate: validatePersist,
		same:     func(_ Change, a, b string) bool { return strings.TrimSpace(a) == strings.TrimSpace(b) },
		show:     showPersist,
		lostOn:   "nothing (a file: removed by rollback)",
	},
	KindChannels: {
		validate: validateChannels,
		same:     func(_ Change, a, b string) bool { return sameChannels(a, b) },
		lostOn:   "reboot or driver reload",
	},
}
