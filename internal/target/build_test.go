package target

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"redline/internal/autotune"
	"redline/internal/buildspec"
	"redline/internal/testutil"
)

// TestAutotuneTrialServerBuild: a server.build trial runs on a server
// started beside the baseline's from the built binary (its process runs
// the cache's redis-server), the baseline's server keeps the distribution's
// binary, and closing the target stops the built one.
func TestAutotuneTrialServerBuild(t *testing.T) {
	t.Parallel()         // waits on its own servers (or builds)
	testutil.NeedRoot(t) // the build cache is /var/cache/redline/build
	testutil.NeedTools(t, "apt-get", "dpkg-source", "make", "/usr/lib/x86_64-linux-gnu/libjemalloc.so", "gcc")
	tg, state := startTrialTarget(t, nil, false)
	b3 := Build{Name: "o3", Spec: buildspec.Spec{Source: "debian", Opt: "-O3"}} // --build o3="--source debian -O -O3"
	spec := Spec{Workload: trialWorkload, Builds: []Build{b3}}
	var out bytes.Buffer
	say := func(l string) { fmt.Fprintln(&out, l) }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute) // a cold cache compiles Redis
	defer cancel()
	if err := tg.buildServers(ctx, &spec, say); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	prov := spec.Builds[0].Built
	if prov == nil || prov.Binary == "" || !strings.Contains(out.String(), "build o3: ") {
		t.Fatalf("o3 not built: %+v\n%s", prov, out.String())
	}
	var seen *trialServer
	tg.beforeMeasure = func(s *trialServer) { seen = s }
	if v, err := tg.Trial(ctx, autotune.Config{{Knob: "server.build", Value: "o3"}}, autotune.TrialOptions{}); err != nil || v.Value <= 0 {
		t.Fatalf("trial: %v, %v", v, err)
	}
	exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(seen.pid), "exe"))
	if seen == tg.base() || err != nil || exe != prov.Binary {
		t.Errorf("the o3 trial ran on pid %d, %s (%v); want %s beside the baseline's", seen.pid, exe, err, prov.Binary)
	}
	if exe, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(tg.base().pid), "exe")); exe == prov.Binary {
		t.Errorf("the baseline's server runs the built binary")
	}
	if why := tg.cannotBuild("o3"); why != "" {
		t.Errorf("o3 untested: %s", why)
	}
	if why := tg.cannotBuild("nope"); !strings.Contains(why, "no build") {
		t.Errorf("an unknown build: %q", why)
	}
	tg.managed = false // as an attached server: never restarted, so nothing is built or compared
	if _, why, ok := tg.untried(ctx, autotune.Candidate{Knob: "server.build", Values: []string{"o3"}}); ok || !strings.Contains(why, "restarts only a server it started") {
		t.Errorf("server.build on an attached server: %q, %v", why, ok)
	}
	tg.built = nil
	if err := tg.buildServers(ctx, &spec, say); err != nil || tg.built != nil {
		t.Errorf("an attached server's builds: %v, %v", tg.built, err)
	}
	tg.managed = true
	pid := seen.pid
	tg.Close()
	if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil {
		t.Errorf("the built server (pid %d) still runs after the target closed", pid)
	}
	noPending(t, state)
}
