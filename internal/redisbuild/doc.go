// Package redisbuild builds redis-server from a source tree, a release
// tarball or the distribution's source package, with a chosen compiler,
// optimisation, -march/-mcpu, LTO, allocator and profile-guided
// optimisation, in a cache directory of its own keyed by a hash of the
// source, the toolchain and the flags. Every build records its provenance
// (buildspec.Provenance) next to the binary. Nothing runs through a
// shell: make, the compiler, tar, dpkg-source and apt-get are executed with
// argument vectors, and every flag is checked first (Validate), because
// make hands its variables to /bin/sh in its recipes.
//
// The PGO training run is a TrainFunc: BenchTraining (a redline bench
// workload against the instrumented server on loopback) unless the caller
// gives another.
package redisbuild
