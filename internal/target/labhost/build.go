package labhost

import (
	"context"
	"fmt"
	"time"

	"redline/internal/lab"
	"redline/internal/labdata"
	"redline/internal/serverhost"
)

// Builder is where a lab's server: {build: ...} is built: on the host
// its servers run on, through the server-host API. For an ssh target a
// session is opened there for the builds (at the first one) and ended by
// the returned function, before the lab opens its own.
func Builder(o Options, t labdata.TargetSpec) (lab.Builder, func()) {
	if t.Kind != labdata.KindSSH {
		h := serverhost.NewLocal(serverhost.LocalOptions{BuildProgress: o.BuildProgress})
		return hostBuild(func(context.Context) (serverhost.Builder, error) { return h, nil }), func() {}
	}
	var sh *sshServerHost
	open := func(ctx context.Context) (serverhost.Builder, error) {
		if sh == nil {
			h, err := dialSSH(ctx, o, t)
			if err != nil {
				return nil, err
			}
			sh = h
			o.notify(fmt.Sprintf("building on %s (the compiler and the build cache are there)", t.Host))
		}
		return sh.h, nil
	}
	return hostBuild(open), func() {
		if sh != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			sh.Close(ctx)
		}
	}
}

func hostBuild(open func(context.Context) (serverhost.Builder, error)) lab.Builder {
	return func(ctx context.Context, spec labdata.BuildSpec, workload string) (labdata.BuildProvenance, error) {
		h, err := open(ctx)
		if err != nil {
			return labdata.BuildProvenance{}, err
		}
		return h.Build(ctx, serverhost.BuildArgs{Spec: spec, Workload: workload})
	}
}
