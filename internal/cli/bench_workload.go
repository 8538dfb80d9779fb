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
	if !w.fs.Changed("max-reply") {
		o.MaxReply = workload.MaxReply(f)
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

// verifyKeys is how many keys of each keyspace a verify-mode file's check
// reads after the run.
const verifyKeys = 10000

// verify checks, after a verify-mode file's run, that reads return what
// was written; a wrong value is exit 1.
func (w *workloadFlags) verify(ctx context.Context, s *streams, o bench.Options) error {
	if w.file == nil || !w.file.Run.Verify {
		return nil
	}
	res, err := workload.Verify(ctx, o, w.file, verifyKeys)
	if err != nil {
		return exitCode(ExitFailure, "redline bench: verify: "+err.Error())
	}
	fmt.Fprintf(s.err, "redline bench: verify: %d keys read, %d values compared: %d wrong, %d keys missing (expired, evicted or deleted)\n",
		res.Keys, res.Values, res.Wrong, res.Missing)
	if res.Wrong > 0 {
		return exitCode(ExitFailure, fmt.Sprintf("redline bench: verify: %d values are not what was written (the first: %s)", res.Wrong, res.FirstWrong))
	}
	return nil
}
