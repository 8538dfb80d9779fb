package cli

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"redline/internal/bench"
	"redline/internal/workload"
)

// workloadFlags are bench's --workload-file options (docs/workload.md).
type workloadFlags struct {
	path      string
	noPreload bool
	file      *workload.File
	fs        *pflag.FlagSet
}

func (w *workloadFlags) define(fl *pflag.FlagSet) {
	w.fs = fl
	fl.StringVar(&w.path, "workload-file", "", "run the workload in `FILE` (docs/workload.md): its preload, then its weighted operations, instead of the suite")
	fl.BoolVar(&w.noPreload, "no-preload", false, "with --workload-file: skip the preload (the data set is already there)")
}

// tests loads the file and makes its measured phase the one test; the
// file's clients and pipeline apply unless -c and -P were given.
func (w *workloadFlags) tests(o *bench.Options, args []string) ([]bench.Test, error) {
	if len(args) > 0 || w.fs.Changed("tests") || w.fs.Changed("ratio") {
		return nil, fmt.Errorf("--workload-file replaces the command, -t and --ratio: give one of them")
	}
	f, err := workload.Load(w.path)
	if err != nil {
		return nil, err
	}
	w.file = f
	if o.Cluster && workload.HasMulti(f) {
		return nil, fmt.Errorf("%s: MULTI/EXEC groups are not supported with --cluster yet", w.path)
	}
	if f.Run.Clients > 0 && !w.fs.Changed("clients") {
		o.Clients = f.Run.Clients
	}
	if f.Run.Pipeline > 0 && !w.fs.Changed("pipeline") {
		o.Pipeline = f.Run.Pipeline
	}
	t, err := workload.Test(f, "")
	if err != nil {
		return nil, err
	}
	return []bench.Test{t}, nil
}

// preload writes the file's data set and loads its scripts before the
// measured run.
func (w *workloadFlags) preload(ctx context.Context, s *streams, o bench.Options) error {
	if w.noPreload {
		addrs, err := workload.Primaries(ctx, o)
		if err != nil {
			return err
		}
		return workload.LoadScripts(ctx, w.file, addrs, o)
	}
	if len(w.file.Preload) > 0 {
		fmt.Fprintf(s.err, "redline bench: preloading %s (%d entries)...\n", w.path, len(w.file.Preload))
	}
	return workload.Fill(ctx, o, w.file)
}
