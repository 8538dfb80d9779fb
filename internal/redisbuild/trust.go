package redisbuild

import (
	"errors"
	"strings"

	"redline/internal/buildspec"
)

// CheckUntrusted holds a build spec that someone else may have written (a
// lab scenario, an autotune session's --build or its journal), unless the
// user says they trust it (--trust-scenario, --trust-build), to what runs
// nothing its author wrote: the distribution's source package, built by a
// compiler found on PATH. A source tree's or tarball's Makefile, or a
// compiler named by path, runs as the user who builds: root, for a lab or
// autotune that tunes the host.
func CheckUntrusted(s buildspec.Spec) error {
	if s.Source != DebianSource || strings.Contains(s.CC, "/") {
		return errors.New("build: a source tree's or tarball's Makefile, or a compiler named by path, runs as root; only source: debian with a compiler on PATH is built from a spec that is not trusted")
	}
	return nil
}
