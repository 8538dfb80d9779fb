package host

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// /proc/net/sockstat and sockstat6, a line per protocol of name/value
// pairs:
//
//	sockets: used 120
//	TCP: inuse 5 orphan 0 tw 2 alloc 7 mem 1
//	TCP6: inuse 2
func readSockstatProbe(r *reader) error {
	s, err := readSockstat(r, "/proc/net")
	r.snap.Net.Sockstat = s
	return err
}

func readSockstat(r *reader, dir string) (map[string]map[string]int64, error) {
	var out map[string]map[string]int64
	for _, name := range []string{"sockstat", "sockstat6"} {
		data, ok := r.file(dir + "/" + name)
		if !ok {
			continue
		}
		s, err := parseSockstat(data)
		if err != nil {
			return out, inFile(err, dir+"/"+name)
		}
		if out == nil {
			out = map[string]map[string]int64{}
		}
		for k, v := range s {
			out[k] = v
		}
	}
	return out, nil
}

func parseSockstat(data []byte) (map[string]map[string]int64, error) {
	out := map[string]map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		proto, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			return out, lineErr(line, "no \"PROTO:\" in %q", clip(sc.Text()))
		}
		f := strings.Fields(rest)
		if len(f)%2 != 0 {
			return out, lineErr(line, "%s: fields do not pair up", proto)
		}
		m := map[string]int64{}
		for i := 0; i < len(f); i += 2 {
			v, err := strconv.ParseInt(f[i+1], 10, 64)
			if err != nil {
				return out, lineErr(line, "%s %s: %q is not a number", proto, f[i], f[i+1])
			}
			m[f[i]] = v
		}
		out[proto] = m
	}
	return out, nil
}
