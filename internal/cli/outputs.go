package cli

import (
	"cmp"

	"redline/internal/atomicfile"
)

// output is a file or a directory a command will write, and the flag
// that named it: every command checks all of its outputs with
// checkOutputs before any work, so a path that cannot be written is
// refused at once (exit 2) rather than after a measurement, in one form:
//
//	redline bench: cannot write -o afile/x.json: afile is not a directory
type output struct {
	flag, path string
	dir        bool   // a directory the command fills (lab -o, profile -o, inspect --capture)
	probe      string // the file to check when not path itself (--hdr-out's PREFIX-TEST.hgrm)
}

// fileOutput and dirOutput name an output; an empty path or "-"
// (standard output) is no output and is not checked.
func fileOutput(flag, path string) output { return output{flag: flag, path: path} }
func dirOutput(flag, path string) output  { return output{flag: flag, path: path, dir: true} }

// checkOutputs checks each output with atomicfile's rule for files
// (CheckFile: the parent a directory this process can create in) or
// for directories (CheckDir), and returns the first refusal as a usage
// error of cmd.
func checkOutputs(cmd string, outs ...output) error {
	for _, o := range outs {
		if err := checkOutput(o); err != nil {
			return usageError("redline %s: cannot write %s %s: %v", cmd, o.flag, o.path, err)
		}
	}
	return nil
}

func checkOutput(o output) error {
	switch {
	case o.path == "" || o.path == "-":
		return nil
	case o.dir:
		return atomicfile.CheckDir(o.path)
	}
	return atomicfile.CheckFile(cmp.Or(o.probe, o.path))
}
