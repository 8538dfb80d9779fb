package lab

import "testing"

// FuzzParseScenario: scenario files come from users; the parser must
// return a scenario or an error, never panic or hang.
func FuzzParseScenario(f *testing.F) {
	f.Add([]byte(tinyScenario))
	f.Add([]byte("name: x\nworkloads: [{name: a, bench: '-t set'}]\nvariants: [{name: b, server: {allocator: tcmalloc}}]\n"))
	f.Add([]byte("target: {kind: address}\nrepetitions: -1\nwarmup: 1h1s\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseScenario(b)
		if err == nil && (len(s.Workloads) == 0 || s.Repetitions < 0 || (s.MaxRuns > 0 && s.MinRuns > s.MaxRuns)) {
			t.Fatalf("accepted a scenario with %d workloads and %d repetitions", len(s.Workloads), s.Repetitions)
		}
	})
}
