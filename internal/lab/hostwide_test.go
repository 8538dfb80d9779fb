package lab

import (
	"context"
	"errors"
	"strings"
	"testing"

	"redline/internal/labdata"
	"redline/internal/netns"
)

func TestHostWideDecision(t *testing.T) {
	for _, c := range []struct {
		others   []string
		allowOpt bool
		field    string
		kind     string
		want     string
		off      bool
	}{
		{nil, false, "", "managed", "allowed: no other", false},
		{[]string{"pid 7"}, false, "", "managed", "refused: 1 other redis-server(s) run on this host (pid 7)", true},
		{[]string{"pid 7"}, true, "", "managed", "ALLOWED", false},
		{[]string{"pid 7"}, false, "allow", "managed", "ALLOWED", false},
		{[]string{"pid 7"}, false, "", "ssh", "ssh target's host", false},
	} {
		l := &labRun{o: Options{AllowHostWide: c.allowOpt}, s: labdata.Scenario{HostWide: c.field, Target: labdata.TargetSpec{Kind: c.kind}},
			res: &labdata.Result{OtherServers: c.others}}
		if got := l.hostWideDecision(); !strings.Contains(got, c.want) || l.hostWideOff != c.off {
			t.Errorf("%+v: %q, off %v", c, got, l.hostWideOff)
		}
	}
}

func TestHostWideBlock(t *testing.T) {
	got := hostWideBlock(map[string][]string{"sysctl vm.overcommit_memory = 1": {"tuned", "all"}}, 16)
	if len(got) != 2 || !strings.Contains(got[1], "sysctl vm.overcommit_memory = 1 (tuned, all): up to 32 flips (16 rounds x 2 variant(s))") {
		t.Errorf("%q", got)
	}
}

func TestScenarioHostWide(t *testing.T) {
	s := DefaultScenario()
	s.HostWide = "yes"
	if err := Validate(&s); err == nil || !strings.Contains(err.Error(), "host_wide") {
		t.Errorf("host_wide: yes: %v", err)
	}
	s.HostWide = "allow"
	if err := Validate(&s); err != nil {
		t.Error(err)
	}
}

func TestDefaultTargetFallsBack(t *testing.T) {
	newPair = func(context.Context, ...netns.PairOptions) (*netns.Pair, error) {
		return nil, errors.New("ip netns add: operation not permitted")
	}
	t.Cleanup(func() { newPair = netns.NewPair })
	l := &labRun{o: Options{NetnsFallback: true}, s: DefaultScenario(), res: &labdata.Result{}}
	tg, err := l.newTarget(context.Background())
	if err != nil || tg.kind != "managed" || len(l.res.HostWide) != 1 || !strings.Contains(l.res.HostWide[0], "operation not permitted") {
		t.Fatalf("target %+v, %v, notes %q", tg, err, l.res.HostWide)
	}
	l = &labRun{s: DefaultScenario(), res: &labdata.Result{}} // a scenario file's netns target does not fall back
	if _, err := l.newTarget(context.Background()); err == nil {
		t.Fatal("a netns target without NetnsFallback fell back")
	}
}
