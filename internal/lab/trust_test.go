package lab

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 24, item 5: a local scenario ran what it named as root: an
// include copied a root-only file's first line into the terminal and the
// reports, LD_PRELOAD and a binary of anyone's ran as root. Without
// --trust-scenario the lab refuses them before anything starts.
func TestUntrustedScenarioServersAreChecked(t *testing.T) {
	mine := filepath.Join(t.TempDir(), "redis-server")
	os.WriteFile(mine, []byte("#!/bin/sh\n"), 0o755)
	for _, tc := range []struct{ server, want string }{
		{`{config: ["include /etc/shadow"]}`, "include"},
		{`{config: ["loadmodule /tmp/x.so"]}`, "loadmodule"},
		{`{config: ["dir /etc"]}`, "dir"},
		{`{config: ["requirepass x"]}`, "requirepass"},
		{`{config: ["hz 10\nloadmodule /tmp/x.so"]}`, "hz"},
		{`{env: {LD_PRELOAD: /tmp/evil.so}}`, "LD_PRELOAD"},
	} {
		sc, err := ParseScenario([]byte("name: x\nworkloads: [{name: a, bench: -t set}]\nvariants:\n  - {name: a, baseline: true}\n  - {name: b, server: " + tc.server + "}\n"))
		if err != nil {
			t.Fatalf("%s: %v", tc.server, err)
		}
		_, err = Execute(context.Background(), Options{Scenario: sc})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--trust-scenario") {
			t.Errorf("%s: %v", tc.server, err)
		}
	}
	if os.Geteuid() == 0 {
		sc, _ := ParseScenario([]byte("name: x\nserver: {binary: " + mine + "}\nworkloads: [{name: a, bench: -t set}]\nvariants: [{name: a, baseline: true}]\n"))
		if _, err := Execute(context.Background(), Options{Scenario: sc}); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
			t.Errorf("a binary below /tmp, as root: %v", err)
		}
	}
	// What a scenario builds or preloads into the load tool runs as root too.
	for _, tc := range []struct{ variant, want string }{
		{`{name: b, client: {env: {LD_PRELOAD: /tmp/evil.so}}}`, "variants.1.client: env"},
		{`{name: b, server: {build: {source: /tmp/redis-src}}}`, "Makefile"},
		{`{name: b, server: {build: {source: debian, cc: /tmp/cc}}}`, "compiler named by path"},
	} {
		sc, err := ParseScenario([]byte("name: x\nclient: {tool: redis-benchmark}\nworkloads: [{name: a, bench: -t set}]\nvariants:\n  - {name: a, baseline: true}\n  - " + tc.variant + "\n"))
		if err != nil {
			t.Fatalf("%s: %v", tc.variant, err)
		}
		if err := checkUntrusted(sc); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--trust-scenario") {
			t.Errorf("%s: %v", tc.variant, err)
		}
	}
	sc, _ := ParseScenario([]byte("name: x\nserver: {config: [\"io-threads 2\", \"maxmemory 1gb\"]}\nworkloads: [{name: a, bench: -t set}]\nvariants: [{name: a, baseline: true}]\n"))
	if err := checkUntrusted(sc); err != nil {
		t.Errorf("performance settings: %v", err)
	}
}

// Issue 24, item 13: a scenario's names reached the terminal, runs.csv
// and the reports as written: an ESC sequence in a variant's name could
// retitle the terminal or hide a line. They are refused where they enter.
func TestScenarioNamesArePlain(t *testing.T) {
	for _, yaml := range []string{
		"name: \"x\\e]0;pwned\\a\"\nworkloads: [{name: a, bench: -t set}]\nvariants: [{name: a, baseline: true}]\n",
		"name: x\nworkloads: [{name: \"a\\rb\", bench: -t set}]\nvariants: [{name: a, baseline: true}]\n",
		"name: x\nworkloads: [{name: a, bench: -t set}]\nvariants: [{name: \"b\\e[2K\", baseline: true}]\n",
	} {
		if _, err := ParseScenario([]byte(yaml)); err == nil || !strings.Contains(err.Error(), "control character") {
			t.Errorf("%q: %v", yaml, err)
		}
	}
}
