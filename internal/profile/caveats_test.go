package profile

import (
	"strings"
	"testing"
)

// TestTopOfStatesItsCaveats: a profile from a VM without hardware
// counters whose stacks mostly sit under unnamed frames says both where
// its numbers are printed (top.txt, the terminal, the lab's report read
// TopTable.Caveats), and names the package whose debug symbols would
// name them: on Debian, redis-server is redis-tools' redis-check-rdb.
func TestTopOfStatesItsCaveats(t *testing.T) {
	p, err := ParsePerfScript(strings.NewReader("redis-server 1\n\t13bfa0 [unknown] (/usr/bin/redis-check-rdb)\n\n" +
		"redis-server 1\n\t13bfa0 [unknown] (/usr/bin/redis-check-rdb)\n\nredis-server 1\n\tf82ec read (/usr/lib/libc.so.6)\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	rec := &Recording{Profile: p, Event: "cpu-clock", Exe: "/usr/bin/redis-check-rdb", DebugPackage: "redis-tools"}
	top := TopOf(rec, 5)
	if top.UnknownSamples != 2 || len(top.Caveats) != 2 {
		t.Fatalf("unknown %d, caveats %q", top.UnknownSamples, top.Caveats)
	}
	var b strings.Builder
	if err := WriteTop(&b, top); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"66.7% under frames perf could not name", "note: no hardware counters", "cpu-clock",
		"note: 66.7% of the samples sit under a frame perf could not name", "install redis-tools-dbgsym", "[redis-server]"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("top.txt lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "redis-check-rdb]") || strings.Contains(b.String(), "redis-server-dbgsym") {
		t.Errorf("top.txt:\n%s", b.String())
	}
	if got := debPackage(t.Context(), "/usr/bin/redis-check-rdb"); got != "" && got != "redis-tools" {
		t.Errorf("dpkg says /usr/bin/redis-check-rdb is in %q", got)
	}
}
