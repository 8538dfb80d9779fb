package doctor

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"redline/internal/change"
	"redline/internal/host"
)

// withRules swaps the registry for the test's rules.
func withRules(t *testing.T, rules ...Rule) {
	t.Helper()
	regMu.Lock()
	saved := registry
	registry = map[string]Rule{}
	regMu.Unlock()
	for _, r := range rules {
		Register(r)
	}
	t.Cleanup(func() { regMu.Lock(); registry = saved; regMu.Unlock() })
}

func rule(id string, sev Severity, check func(*Facts) Result) Rule {
	return Rule{ID: id, Section: "tcp", Severity: sev, Title: id, Why: "why", Source: "src", Needs: NeedHost, Check: check}
}

func TestSelect(t *testing.T) {
	withRules(t, rule("tcp-a", Low, nil2), rule("tcp-b", Low, nil2), rule("nic-c", Low, nil2))
	ids := func(o Options) []string {
		rs, err := Select(o)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	if d := cmp.Diff([]string{"nic-c", "tcp-a", "tcp-b"}, ids(Options{})); d != "" {
		t.Error(d)
	}
	if d := cmp.Diff([]string{"tcp-a", "tcp-b"}, ids(Options{Only: []string{"tcp-*"}})); d != "" {
		t.Error(d)
	}
	if d := cmp.Diff([]string{"nic-c", "tcp-b"}, ids(Options{Skip: []string{"tcp-a"}})); d != "" {
		t.Error(d)
	}
	if _, err := Select(Options{Only: []string{"tcp-typo"}}); err == nil || !strings.Contains(err.Error(), "tcp-typo") {
		t.Errorf("unknown rule: %v", err)
	}
}

func nil2(*Facts) Result { return Pass("ok") }

func TestRunNoRules(t *testing.T) {
	withRules(t)
	if _, err := Run(context.Background(), &Facts{}, Options{}); err != ErrNoRules {
		t.Errorf("err = %v, want ErrNoRules", err)
	}
}

func TestRunIsolatesPanicsAndNeeds(t *testing.T) {
	withRules(t,
		rule("boom", High, func(*Facts) Result { panic("index out of range") }),
		rule("fine", Low, func(*Facts) Result {
			return Fire("bad").With(Ev("/proc/x", 1)).WithFix(new(Fix).Sysctl("net.core.x", "2", "1", "w"))
		}),
		Rule{ID: "needs-redis", Section: "redis", Severity: Low, Title: "t", Why: "w", Source: "s", Needs: NeedRedis, Check: nil2},
	)
	rep, err := Run(context.Background(), &Facts{Host: &host.Snapshot{}, RedisNote: "no server address given"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Finding{}
	for _, f := range rep.Findings {
		got[f.ID] = f
	}
	if f := got["boom"]; f.Status != Errored || !strings.Contains(f.Reason, "index out of range") {
		t.Errorf("panicking rule: %+v", f)
	}
	if f := got["fine"]; f.Status != Fired || f.Fix.Changes[0].Rule != "fine" || f.Fix.Undo[0].Value != "1" {
		t.Errorf("fired rule: %+v", f)
	}
	if f := got["needs-redis"]; f.Status != NotChecked || !strings.Contains(f.Reason, "no server address") {
		t.Errorf("needs-redis: %+v", f)
	}
	if rep.Findings[0].ID != "fine" {
		t.Errorf("fired findings must come first, got %s", rep.Findings[0].ID)
	}
}

func TestCommand(t *testing.T) {
	tests := []struct {
		c    change.Change
		want string
	}{
		{change.Change{Kind: change.KindSysctl, Target: "net.ipv4.ip_local_port_range", Value: "1024 65535"}, "sysctl -w net.ipv4.ip_local_port_range='1024 65535'"},
		{change.Change{Kind: change.KindFile, Target: "/proc/irq/5/smp_affinity_list", Value: "3"}, "echo 3 > /proc/irq/5/smp_affinity_list"},
		{change.Change{Kind: change.KindRedisConfig, Target: "hz", Value: "100"}, "redis-cli -h 127.0.0.1 -p 6379 CONFIG SET hz 100"},
		{change.Change{Kind: change.KindAffinity, Target: "42", Value: "4-7"}, "taskset -a -p -c 4-7 42"},
		{change.Change{Kind: change.KindService, Target: "irqbalance", Value: "inactive"}, "systemctl stop irqbalance"},
		{change.Change{Kind: change.KindService, Target: "irqbalance", Value: "active"}, "systemctl start irqbalance"},
		{change.Change{Kind: change.KindChannels, Target: "eth0", Value: "8"}, "ethtool -L eth0 combined 8"},
		{change.Change{Kind: change.KindFile, Target: "/sys/x", Value: "it's"}, `echo 'it'\''s' > /sys/x`},
	}
	for _, tt := range tests {
		if got := Command(tt.c, "127.0.0.1:6379"); got != tt.want {
			t.Errorf("Command(%+v) = %q, want %q", tt.c, got, tt.want)
		}
	}
}

// TestUndoCommand: an undo whose value was not read says so instead of
// writing an empty value; a sysctl's or a Redis setting's empty value is
// one to restore.
func TestUndoCommand(t *testing.T) {
	tests := []struct {
		c    change.Change
		want string
	}{
		{change.Change{Kind: change.KindFile, Target: "/proc/irq/5/smp_affinity_list", Value: "0-3"}, "echo 0-3 > /proc/irq/5/smp_affinity_list"},
		{change.Change{Kind: change.KindFile, Target: "/proc/irq/5/smp_affinity_list"}, "# /proc/irq/5/smp_affinity_list: its value before the fix was not read here: note it before applying"},
		{change.Change{Kind: change.KindAffinity, Target: "42"}, "# 42: its value before the fix was not read here: note it before applying"},
		{change.Change{Kind: change.KindSysctl, Target: "net.ipv4.ip_local_reserved_ports"}, "sysctl -w net.ipv4.ip_local_reserved_ports=''"},
		{change.Change{Kind: change.KindSysctl, Target: "vm.nr_hugepages"}, "# vm.nr_hugepages: its value before the fix was not read here: note it before applying"},
		{change.Change{Kind: change.KindRedisConfig, Target: "save"}, "redis-cli -h 127.0.0.1 -p 6379 CONFIG SET save ''"},
	}
	for _, tt := range tests {
		if got := UndoCommand(tt.c, "127.0.0.1:6379"); got != tt.want {
			t.Errorf("UndoCommand(%+v) = %q, want %q", tt.c, got, tt.want)
		}
	}
}

func TestParseSeverity(t *testing.T) {
	for in, want := range map[string]Severity{"high": High, "H": High, "medium": Medium, "low": Low, "info": Info, "i": Info} {
		if got, err := ParseSeverity(in); err != nil || got != want {
			t.Errorf("ParseSeverity(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseSeverity("severe"); err == nil {
		t.Error("unknown severity accepted")
	}
}

// Doctor never writes: no file in doctor, its rules or redisadmin calls an
// API that writes files, runs commands or sets affinity, and redisadmin's
// ConfigSet (for tune) is never called from doctor. host is checked by
// TestGatherLeavesTreeUntouched, since its capture command legitimately
// writes fixture copies.
func TestDoctorNeverWrites(t *testing.T) {
	forbidden := map[string]bool{
		"os.WriteFile": true, "os.Create": true, "os.OpenFile": true, "os.Remove": true, "os.RemoveAll": true,
		"os.Rename": true, "os.Mkdir": true, "os.MkdirAll": true, "os.Chmod": true, "os.Truncate": true,
		"os.Symlink": true, "os.Link": true, "unix.Write": true, "syscall.Write": true, "exec.Command": true,
		"exec.CommandContext": true, "ConfigSet": true, "unix.SchedSetaffinity": true,
	}
	dirs := []string{".", "rules", "../redisadmin"}
	checked := 0
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			checked++
			for _, call := range calls(t, file) {
				if forbidden[call] && !(call == "ConfigSet" && strings.HasSuffix(file, "redisadmin.go")) {
					t.Errorf("%s calls %s: only internal/tune may write", file, call)
				}
			}
		}
	}
	if checked < 60 {
		t.Errorf("checked only %d files; the paths moved?", checked)
	}
}

// calls returns the selector calls (pkg.Func, or .Method as Method) in file.
func calls(t *testing.T, file string) []string {
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), file, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok {
			out = append(out, id.Name+"."+sel.Sel.Name)
		}
		out = append(out, sel.Sel.Name)
		return true
	})
	return out
}

// doctor proposes changes and never links the package that makes them:
// both share internal/change.
func TestDoctorDoesNotImportTune(t *testing.T) {
	for _, dir := range []string{".", "rules"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				if imp.Path.Value == `"redline/internal/tune"` {
					t.Errorf("%s imports internal/tune", file)
				}
			}
		}
	}
}

// A host-wide net sysctl is read in the server's namespace when the
// namespace has it (optmem_max is per namespace since Linux 6.8) and
// from the host when it does not (busy_poll, net_core_table only); a
// per-namespace one the namespace lacks is absent, not the host's.
func TestSysctlHostWideOrNamespace(t *testing.T) {
	f := &Facts{Host: &host.Snapshot{
		Sysctls:   host.Sysctls{"net.core.optmem_max": "20480", "net.core.busy_poll": "50", "net.core.somaxconn": "4096"},
		Processes: []host.Process{{PID: 7, NetNS: 9, NetSysctls: host.Sysctls{"net.core.optmem_max": "131072"}}},
	}}
	for _, tc := range []struct {
		name, want string
		ok, netns  bool
	}{
		{"net.core.optmem_max", "131072", true, true},
		{"net.core.busy_poll", "50", true, false},
		{"net.core.somaxconn", "", false, true},
	} {
		v, ev, ok := f.Sysctl(tc.name)
		if v != tc.want || ok != tc.ok || strings.Contains(ev.Note, "namespace") != tc.netns {
			t.Errorf("%s = %q (%v, %q), want %q (%v, from the namespace %v)", tc.name, v, ok, ev.Note, tc.want, tc.ok, tc.netns)
		}
	}
}
