package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version and commit are set at build time (make build, make install):
// -ldflags "-X redline/internal/cli.version=... -X redline/internal/cli.commit=...".
var version, commit = "", ""

func init() { register(newVersionCmd) }

func newVersionCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print redline's version, the commit it was built from and the Go version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprint(s.out, versionText())
			return err
		},
	}
}

// versionText is what "redline version" and "redline --version" print.
func versionText() string {
	return fmt.Sprintf("redline %s\ncommit %s\n%s %s/%s\n", Version(), Commit(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// Version returns redline's version: the linker-provided one, or "dev"
// with the VCS revision the Go toolchain recorded, or "dev".
func Version() string {
	if version != "" {
		return version
	}
	if rev := vcsRevision(); rev != "" {
		return "dev+" + shortRev(rev)
	}
	return "dev"
}

// Commit returns the commit redline was built from: the linker-provided
// one, or the VCS revision the Go toolchain recorded, or "unknown".
func Commit() string {
	if commit != "" {
		return commit
	}
	if rev := vcsRevision(); rev != "" {
		return rev
	}
	return "unknown"
}

// vcsRevision is the toolchain's vcs.revision, with "-dirty" for a
// modified tree; "" when it recorded none (go build -buildvcs=false).
func vcsRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" && dirty {
		rev += "-dirty"
	}
	return rev
}

func shortRev(rev string) string {
	base, dirty := strings.CutSuffix(rev, "-dirty")
	if len(base) > 12 {
		base = base[:12]
	}
	if dirty {
		base += "-dirty"
	}
	return base
}
