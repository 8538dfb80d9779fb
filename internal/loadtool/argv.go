package loadtool

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"redline/internal/benchdata"
)

// benchmarkDrop are redis-benchmark options the lab sets itself (its
// target, one test a run, CSV output) or that make no run: with whether
// they take a value.
var benchmarkDrop = map[string]bool{"-h": true, "-p": true, "-s": true, "-t": true, "-u": true,
	"-q": false, "--csv": false, "-l": false, "-I": false}

// redlineOnly are redline bench options redis-benchmark does not have.
var redlineOnly = []string{"--duration", "--warmup", "--rate", "--json", "-o", "--workers", "--hdr", "--ratio"}

func benchmarkArgv(r Request, host, port string) ([]string, error) {
	var out []string
	for i := 0; i < len(r.Args); i++ {
		a := r.Args[i]
		name, _, _ := strings.Cut(a, "=")
		for _, o := range redlineOnly {
			if name == o {
				return nil, fmt.Errorf("redis-benchmark has no %s (a redline bench option): give -n instead", o)
			}
		}
		if takesValue, drop := benchmarkDrop[a]; drop {
			if takesValue {
				i++
			}
			continue
		}
		out = append(out, a)
	}
	return append(out, "-h", host, "-p", port, "-t", strings.ToLower(r.Test), "--csv"), nil
}

func parseBenchmark(out []byte, r Request) (*benchdata.Summary, error) {
	rows, err := ParseBenchmarkCSV(bytes.NewReader(out))
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		if strings.EqualFold(row.Test, r.Test) {
			return row.Summary(requestsOf(r.Args, "-n", 100000)), nil
		}
	}
	return nil, fmt.Errorf("redis-benchmark printed no %s row", r.Test)
}

func memtierArgv(r Request, host, port string) ([]string, error) {
	var out []string
	for i := 0; i < len(r.Args); i++ {
		switch a := r.Args[i]; a {
		case "-s", "--server", "-p", "--port":
			i++
		default:
			out = append(out, a)
		}
	}
	return append(out, "--server", host, "--port", port, "--hide-histogram"), nil
}

func parseMemtier(out []byte, r Request) (*benchdata.Summary, error) {
	rows, err := ParseMemtier(bytes.NewReader(out))
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		if row.Test == "Totals" {
			return row.Summary(0), nil
		}
	}
	return nil, fmt.Errorf("memtier_benchmark printed no Totals row")
}

// requestsOf reads a count option's value from a line (def without it).
func requestsOf(args []string, flag string, def int64) int64 {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			if n, err := strconv.ParseInt(args[i+1], 10, 64); err == nil {
				return n
			}
		}
	}
	return def
}
