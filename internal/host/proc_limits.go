package host

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// /proc/PID/limits, a table with a header:
//
//	Limit                     Soft Limit           Hard Limit           Units
//	Max open files            20000                20000                files

// parseOpenFilesLimit returns the "Max open files" limits (-1 for
// unlimited), or nil if the line is missing.
func parseOpenFilesLimit(data []byte) (*RLimit, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		rest, ok := strings.CutPrefix(sc.Text(), "Max open files")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 2 {
			return nil, lineErr(line, "Max open files: want soft and hard limits")
		}
		soft, err1 := parseLimit(f[0])
		hard, err2 := parseLimit(f[1])
		if err1 != nil || err2 != nil {
			return nil, lineErr(line, "Max open files: %q %q are not limits", f[0], f[1])
		}
		return &RLimit{Soft: soft, Hard: hard}, nil
	}
	return nil, nil
}

func parseLimit(s string) (int64, error) {
	if s == "unlimited" {
		return -1, nil
	}
	return strconv.ParseInt(s, 10, 64)
}
