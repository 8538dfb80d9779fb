package lab

import (
	"context"
	"fmt"

	"redline/internal/labdata"
)

// NetStarter is implemented by a Tuner that can give a netns target's
// namespaces a starting state of net.* sysctls (TargetSpec.Sysctls,
// ClientSysctls), as the write-ups' machines had (somaxconn 128, a narrow
// port range): allow-listed and read back like any change, inside the
// namespace only. undo restores them; the target calls it before it
// removes the namespaces.
type NetStarter interface {
	StartNetNS(ctx context.Context, ns string, sysctls map[string]string) (steps []labdata.PlanStep, undo func(context.Context) error, err error)
}

// startNet sets the target's starting sysctls, before its server starts
// (somaxconn is read when the server calls listen()).
func (l *labRun) startNet(ctx context.Context) error {
	t := l.s.Target
	if len(t.Sysctls) == 0 && len(t.ClientSysctls) == 0 {
		return nil
	}
	st, ok := l.o.Tuner.(NetStarter)
	if !ok || l.tg.pair == nil {
		return fmt.Errorf("target.sysctls: no tuner here can set a netns target's starting sysctls")
	}
	for _, side := range []struct {
		ns      string
		sysctls map[string]string
	}{{l.tg.pair.Server, t.Sysctls}, {l.tg.pair.Client, t.ClientSysctls}} {
		if len(side.sysctls) == 0 {
			continue
		}
		l.event(Event{Message: fmt.Sprintf("starting state of namespace %s: %v", side.ns, side.sysctls)})
		steps, undo, err := st.StartNetNS(ctx, side.ns, side.sysctls)
		l.tg.start = append(l.tg.start, steps...)
		if undo != nil {
			l.tg.unstart = append(l.tg.unstart, undo)
		}
		if err != nil {
			return fmt.Errorf("starting sysctls of namespace %s: %w", side.ns, err)
		}
	}
	return nil
}
