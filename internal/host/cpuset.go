package host

import "redline/internal/cpuset"

// CPUSet is the host model's name for a set of CPUs or nodes; the type and
// its two kernel notations live in the leaf package cpuset, so that value
// packages (change, placement) use it without linking the host reader.
type CPUSet = cpuset.Set

// MaxCPUs bounds the CPU numbers a CPUSet accepts.
const MaxCPUs = cpuset.MaxCPUs

// NewCPUSet, CPURange, ParseCPUList and ParseCPUMask are cpuset's.
var (
	NewCPUSet    = cpuset.New
	CPURange     = cpuset.Range
	ParseCPUList = cpuset.ParseList
	ParseCPUMask = cpuset.ParseMask
)
