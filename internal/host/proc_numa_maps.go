package host

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// /proc/PID/numa_maps, a line per mapping with per-node page counts in the
// mapping's page size:
//
//	56520d12e000 default anon=1 dirty=1 active=0 N0=1 kernelpagesize_kB=4
//	7f2a40000000 bind:1 anon=512 dirty=512 N1=512 kernelpagesize_kB=2048

// parseNUMAMaps sums the N<node>= counts: pages per node, and bytes per
// node weighed by kernelpagesize_kB.
func parseNUMAMaps(data []byte) (pages, byteCount map[int]uint64, err error) {
	pages, byteCount = map[int]uint64{}, map[int]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for line := 1; sc.Scan(); line++ {
		perNode, pageKB := map[int]uint64{}, uint64(4)
		for _, f := range strings.Fields(sc.Text())[1:] {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				continue
			}
			switch {
			case k == "kernelpagesize_kB":
				if pageKB, err = strconv.ParseUint(v, 10, 64); err != nil {
					return pages, byteCount, lineErr(line, "kernelpagesize_kB=%q", v)
				}
			case len(k) > 1 && k[0] == 'N' && k[1] >= '0' && k[1] <= '9':
				node, err1 := strconv.Atoi(k[1:])
				n, err2 := strconv.ParseUint(v, 10, 64)
				if err1 != nil || err2 != nil {
					return pages, byteCount, lineErr(line, "%q is not N<node>=<pages>", f)
				}
				perNode[node] += n
			}
		}
		for node, n := range perNode {
			pages[node] += n
			byteCount[node] += n * pageKB * 1024
		}
	}
	return pages, byteCount, nil
}
