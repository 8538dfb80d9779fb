package host

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// /proc/net/netstat holds pairs of lines, names then values:
//
//	TcpExt: SyncookiesSent SyncookiesRecv ... ListenOverflows ListenDrops ...
//	TcpExt: 0 0 ... 0 0 ...
//	IpExt: InNoRoutes ...
//	IpExt: 0 ...
func readNetstatProbe(r *reader) error {
	tcpExt, err := readNetstat(r, "/proc/net/netstat")
	r.snap.Net.TcpExt = tcpExt
	return err
}

func readNetstat(r *reader, path string) (map[string]uint64, error) {
	data, ok := r.file(path)
	if !ok {
		return nil, nil
	}
	sections, err := parseNetstat(data)
	return sections["TcpExt"], inFile(err, path)
}

// parseNetstat reads every section of a netstat/snmp style file.
func parseNetstat(data []byte) (map[string]map[string]uint64, error) {
	out := map[string]map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for line := 1; sc.Scan(); line++ {
		names := strings.Fields(sc.Text())
		if len(names) == 0 {
			continue
		}
		if !sc.Scan() {
			return out, lineErr(line, "%s names without a values line", names[0])
		}
		line++
		values := strings.Fields(sc.Text())
		if len(values) != len(names) || values[0] != names[0] {
			return out, lineErr(line, "%s: %d values for %d names", names[0], len(values)-1, len(names)-1)
		}
		sec := map[string]uint64{}
		for i := 1; i < len(names); i++ {
			v, err := strconv.ParseInt(values[i], 10, 64) // some counters are signed (MaxConn -1)
			if err != nil {
				return out, lineErr(line, "%s %s: %q is not a number", names[0], names[i], values[i])
			}
			sec[names[i]] = uint64(v)
		}
		out[strings.TrimSuffix(names[0], ":")] = sec
	}
	return out, nil
}

// ParseNetstat parses /proc/net/netstat or /proc/net/snmp (pairs of a
// names line and a values line) into section -> counter -> value, for
// callers that read the file themselves (bench reads it inside the
// server's namespace before and after a run).
func ParseNetstat(data []byte) (map[string]map[string]uint64, error) { return parseNetstat(data) }
