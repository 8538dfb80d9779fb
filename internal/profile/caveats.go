package profile

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"redline/internal/trusted"
)

// dsoAliases are binaries that are another under a second name: Redis is
// one executable that picks its role from argv[0], and Debian installs it
// as /usr/bin/redis-check-rdb (package redis-tools) with redis-server and
// redis-check-aof as links to it, so perf names its unsymbolized frames
// after the file: [redis-check-rdb]. They are folded into the name the
// reader knows.
var dsoAliases = map[string]string{"redis-check-rdb": "redis-server", "redis-check-aof": "redis-server"}

// unknownCaveatPct is the share of samples under unnamed frames from
// which the profile says so beside its numbers.
const unknownCaveatPct = 10

// TopOf is Top of a recording, with what limits its numbers: the share
// of samples under frames perf could not name, and the event sampled
// (without hardware counters, a software timer), each a sentence in
// Caveats, naming the debug-symbol package that would name the frames.
func TopOf(rec *Recording, n int) TopTable {
	t := Top(rec.Profile, n)
	t.Event = rec.Event
	if strings.HasPrefix(rec.Event, "cpu-clock") || strings.HasPrefix(rec.Event, "task-clock") {
		t.Caveats = append(t.Caveats, "no hardware counters on this machine (a VM without a virtual PMU): perf sampled with the "+
			"cpu-clock software timer, so time in code that runs with interrupts disabled is charged to where they are enabled again")
	}
	if t.UnknownPct >= unknownCaveatPct {
		t.Caveats = append(t.Caveats, fmt.Sprintf("%.1f%% of the samples sit under a frame perf could not name ([unknown], [redis-server]): "+
			"the time is real, whose it is is not; the binary lacks symbols for that code and frame pointers to unwind it: %s",
			t.UnknownPct, debugHint(rec.Exe, rec.DebugPackage)))
	}
	return t
}

// debugHint says which debug symbols to install for exe.
func debugHint(exe, pkg string) string {
	switch {
	case pkg != "":
		return fmt.Sprintf("install %s (Debian's debian-debug archive; %s is package %s) and profile again", pkg+"-dbgsym", exe, pkg)
	case exe != "":
		return fmt.Sprintf("install the debug symbols of %s and profile again", exe)
	}
	return "install the server binary's debug symbols and profile again"
}

// unknownSamples counts the samples of p with an unnamed frame.
func unknownSamples(p *Profile) int64 {
	var n int64
	for _, s := range p.Stacks {
		for _, f := range s.Frames[1:] {
			if isUnknown(f) {
				n += s.Count
				break
			}
		}
	}
	return n
}

// exeOf is the file the process runs, links resolved ("" when unknown).
func exeOf(proc string, pid int) string {
	exe, err := os.Readlink(filepath.Join(proc, strconv.Itoa(pid), "exe"))
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(exe, " (deleted)")
}

// debPackage is the Debian package that owns path (dpkg-query -S), ""
// when there is no dpkg or no owner. Its debug symbols are
// PACKAGE-dbgsym: Debian names them after the package holding the ELF
// file, which for redis-server is redis-tools (redis-server's package
// holds only a link).
func debPackage(ctx context.Context, path string) string {
	if path == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	dpkg, err := trusted.Program("dpkg-query")
	if err != nil {
		return ""
	}
	out, err := exec.CommandContext(ctx, dpkg, "-S", path).Output()
	if err != nil {
		return ""
	}
	pkg, _, ok := strings.Cut(strings.TrimSpace(string(out)), ": ")
	if !ok || strings.ContainsAny(pkg, " ,\n") {
		return ""
	}
	pkg, _, _ = strings.Cut(pkg, ":") // a multi-arch package's ":amd64"
	return pkg
}

// sampledEvent is the event perf record sampled on (perf evlist), ""
// when it cannot tell.
func sampledEvent(ctx context.Context, perf, data string) string {
	out, err := runStep(ctx, StepSlack, []string{perf, "evlist", "-i", data})
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	ev, _, _ := strings.Cut(line, ":")
	return ev
}
