package redisbuild

import (
	"context"
	"fmt"
	"time"

	"redline/internal/bench"
	"redline/internal/bench/cmdline"
	"redline/internal/redisserver"
)

// BenchTraining is the default TrainFunc: the instrumented server started
// on loopback, the workload's tests run against it for the training's
// duration (shared between them), and the server shut down cleanly so it
// writes its profile.
func BenchTraining(ctx context.Context, t Training) error {
	wl, err := cmdline.ParseWorkload(t.Workload)
	if err != nil {
		return err
	}
	srv, err := redisserver.Start(ctx, redisserver.Options{Binary: t.Binary, Env: t.Env})
	if err != nil {
		return err
	}
	o := wl.Options
	o.Network, o.Addr, o.TLS, o.Progress = "tcp", srv.Addr(), nil, nil
	o.Requests, o.Duration, o.Warmup = 0, t.Duration/timeDiv(len(wl.Tests)), 0
	for _, test := range wl.Tests {
		if _, err := bench.Run(ctx, o, test, nil); err != nil {
			srv.Stop()
			return fmt.Errorf("%s: %w", test.Title, err)
		}
	}
	return srv.Stop()
}

func timeDiv(n int) time.Duration { return time.Duration(max(n, 1)) }
