// Package host is redline's read-only model of the machine Redis runs on:
// CPUs and NUMA nodes, interrupts and their affinities, NICs with their
// queues and queue IRQs, sysctls, memory and THP settings, cgroup limits,
// and the Redis processes with their threads.
//
// Every read goes through an FS rooted at a directory, so the same code
// reads the live machine ("/") or a fixture tree (testdata/hosts/NAME), and
// the FS records what it read so that Capture can copy exactly those files
// into a new fixture tree. What no file holds (ethtool, netlink dumps,
// reads inside another network namespace, a process's socket fds) the
// live machine answers through kernel.Interface (package
// internal/host/kernel), which this package calls and tests substitute;
// a capture keeps those answers as files. Read builds a Snapshot, the
// shared type the doctor and the tuner work from; docs/inspect.md
// documents its JSON.
//
// Files are parsed one per source file of this package, each with a pure
// parseX function (table-tested on strings) and a header comment showing a
// sample of the kernel file. A missing file leaves its fact absent; a
// malformed one is reported in Snapshot.Errors with the file and line,
// and the rest of the snapshot is still produced.
package host
