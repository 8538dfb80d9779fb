package doctor

import (
	"context"
	"time"
)

// DiagnoseOptions say what Diagnose gathers and runs.
type DiagnoseOptions struct {
	Gather GatherOptions
	Rules  Options
	// HostOnlyFallback checks the host alone when the server cannot be
	// reached: for a server nobody named (a command's default address),
	// never for one asked for, nor for a cluster (--cluster).
	HostOnlyFallback bool
	// Intrinsic measures the host's intrinsic latency for this long
	// (saturating one core) when set.
	Intrinsic time.Duration
}

// Diagnose gathers the facts and runs the rules: the doctor's whole
// pipeline, the same for redline doctor, the lab and a session on a
// server host. When it falls back to the host alone, the report's
// Target.RedisError says why.
func Diagnose(ctx context.Context, o DiagnoseOptions) (*Report, error) {
	facts, err := Gather(ctx, o.Gather)
	fellBack := ""
	if err != nil && o.HostOnlyFallback && o.Gather.Redis != nil && o.Gather.Cluster == nil {
		fellBack = err.Error()
		g := o.Gather
		g.Redis = nil
		if facts, err = Gather(ctx, g); facts != nil {
			facts.RedisNote = "no server at the default address " + o.Gather.Redis.Addr
		}
	}
	if err != nil {
		return nil, err
	}
	if o.Intrinsic > 0 {
		d := MeasureIntrinsicLatency(ctx, o.Intrinsic)
		facts.IntrinsicLatency = &d
	}
	rep, err := Run(ctx, facts, o.Rules)
	if rep != nil {
		rep.Target.RedisError = fellBack
	}
	return rep, err
}
