package cmdline

import "testing"

// FuzzParseWorkload: workload lines come from scenario files; parsing must
// give options that validate, or an error, never a panic.
func FuzzParseWorkload(f *testing.F) {
	for _, s := range []string{
		"redis-benchmark -t set,get -c 32 -n 500000 -r 500000 --threads 6 -l -q --csv -h 192.168.100.2",
		`-r 10000 -n 10000 eval 'return redis.call("ping")' 0`,
		"--ratio 1:10 --key-dist zipf -r 1000 --data-size-list 32:1,1024:3",
		`set "a b\" 'c`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		w, err := ParseWorkload(line)
		if err != nil {
			return
		}
		if verr := w.Options.Validate(); verr != nil {
			t.Fatalf("%q parsed into invalid options: %v", line, verr)
		}
		if len(w.Tests) == 0 {
			t.Fatalf("%q parsed into no tests", line)
		}
	})
}
