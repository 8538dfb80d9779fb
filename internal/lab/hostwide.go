package lab

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"redline/internal/change"
	"redline/internal/labdata"
	"redline/internal/target/policy"
)

// Previewer is implemented by a Tuner that can plan a variant's changes
// without applying them; the lab lists the host-wide ones before its
// first change.
type Previewer interface {
	Preview(ctx context.Context, spec labdata.TuneSpec, env Env) ([]change.Change, error)
}

// guardHostWide plans every tuned variant before the first change and
// says, in one block, which host-wide changes they make and how often
// the lab flips each (applied and rolled back once a round per variant).
// With other redis-servers on this host, and neither host_wide: allow
// nor --allow-host-wide, the variants run without them (Env.HostWideOff).
func (l *labRun) guardHostWide(ctx context.Context, rounds int) error {
	p, ok := l.o.Tuner.(Previewer)
	if !ok {
		return nil
	}
	env := l.envNow(ctx)
	byChange := map[string][]string{} // "sysctl vm.x = 1" -> variants
	for _, v := range l.s.Variants {
		if v.Tune == nil {
			continue
		}
		cs, err := p.Preview(ctx, *v.Tune, env)
		if err != nil {
			return fmt.Errorf("variant %s: plan: %w", v.Name, err)
		}
		for _, c := range cs {
			if policy.HostWide(c, env.ServerNetNS) {
				byChange[c.String()] = append(byChange[c.String()], v.Name)
			}
		}
	}
	if len(byChange) == 0 {
		return nil
	}
	l.res.HostWide = append(l.res.HostWide, hostWideBlock(byChange, rounds)...)
	l.res.HostWide = append(l.res.HostWide, l.hostWideDecision())
	l.event(Event{Message: strings.Join(l.res.HostWide, "\n")})
	return nil
}

// hostWideBlock is the list of host-wide changes, sorted, with their flips.
func hostWideBlock(byChange map[string][]string, rounds int) []string {
	out := []string{fmt.Sprintf("host-wide changes of the variants (each applied and rolled back once a round, up to %d round(s)):", rounds)}
	keys := make([]string, 0, len(byChange))
	for k := range byChange {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		vs := byChange[k]
		out = append(out, fmt.Sprintf("  %s (%s): up to %d flips (%d rounds x %d variant(s))", k, strings.Join(vs, ", "), rounds*len(vs), rounds, len(vs)))
	}
	return out
}

// hostWideDecision decides whether the host-wide changes are made, and
// says so in one line.
func (l *labRun) hostWideDecision() string {
	off, line := policy.Guard(l.s.Target.Kind == labdata.KindSSH, "this lab", l.res.OtherServers, l.o.AllowHostWide || l.s.HostWide == "allow", "the variants run without them", "host_wide: allow or --allow-host-wide")
	l.hostWideOff = off
	return line
}

// newTarget prepares the scenario's target. The default scenario's server
// gets a network namespace, so its net.* sysctls stay there; where one
// cannot be made it runs on this host's network, said in one line.
func (l *labRun) newTarget(ctx context.Context) (*target, error) {
	tg, err := newTarget(ctx, l.s.Target)
	if err == nil || l.s.Target.Kind != labdata.KindNetns || !l.o.NetnsFallback {
		return tg, err
	}
	note := fmt.Sprintf("no network namespace for the server (%v): it runs on this host's network, where its net.* sysctls are host-wide", err)
	l.res.HostWide = append(l.res.HostWide, note)
	l.event(Event{Message: note})
	l.s.Target.Kind = labdata.KindManaged
	return newTarget(ctx, l.s.Target)
}
