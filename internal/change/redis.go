package change

import (
	"errors"
	"strconv"
	"strings"

	"redline/internal/redisparam"
)

// Redis CONFIG SET values, compared the way Redis canonicalises them
// ("1gb" and "1073741824").

func validateRedisConfig(c Change) error {
	if c.Target == "" || strings.ContainsAny(c.Target, " \t\r\n*?") {
		return errors.New("not a Redis config parameter name (one word, no wildcards)")
	}
	return redisparam.Check(c.Target)
}

func sameRedisValue(c Change, a, b string) bool {
	if redisNormal(a) == redisNormal(b) {
		return true
	}
	if c.Target == "client-output-buffer-limit" {
		return sameClassLimits(a, b)
	}
	return false
}

// sameClassLimits compares client-output-buffer-limit values class by
// class: CONFIG SET of one class leaves the others, so "normal 0 0 0"
// reads back with the slave and pubsub limits appended.
func sameClassLimits(a, b string) bool {
	x, okA := classLimits(a)
	y, okB := classLimits(b)
	if !okA || !okB {
		return false
	}
	small, big := x, y
	if len(small) > len(big) {
		small, big = big, small
	}
	for class, lim := range small {
		if big[class] != lim {
			return false
		}
	}
	return true
}

func classLimits(v string) (map[string]string, bool) {
	f := strings.Fields(redisNormal(v))
	if len(f)%4 != 0 {
		return nil, false
	}
	out := map[string]string{}
	for i := 0; i < len(f); i += 4 {
		class := f[i]
		if class == "replica" {
			class = "slave"
		}
		out[class] = strings.Join(f[i+1:i+4], " ")
	}
	return out, true
}

// redisNormal is the form Redis stores a value in: lower case, single
// spaces, memory sizes in bytes ("1gb" -> "1073741824", "1k" -> "1000", as
// in Redis's memtoull).
func redisNormal(v string) string {
	fields := strings.Fields(strings.ToLower(v))
	for i, f := range fields {
		if n, ok := memBytes(f); ok {
			fields[i] = strconv.FormatUint(n, 10)
		}
	}
	return strings.Join(fields, " ")
}

var memUnits = []struct {
	suffix string
	mult   uint64
}{
	{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30},
	{"k", 1000}, {"m", 1000 * 1000}, {"g", 1000 * 1000 * 1000},
	{"b", 1},
}

func memBytes(f string) (uint64, bool) {
	for _, u := range memUnits {
		num, ok := strings.CutSuffix(f, u.suffix)
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(num, 10, 64)
		return n * u.mult, err == nil
	}
	return 0, false
}
