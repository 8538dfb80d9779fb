package rules

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/doctor"
	"redline/internal/host"
	"redline/internal/testutil"
)

// A sysctl whose value is not a number is a parse error: the rule that
// reads it is an error (not "absent"), and the report has errors. (The
// x86-2socket-mlx5 tree with a garbled somaxconn.)
func TestUnparseableSysctlIsAnError(t *testing.T) {
	dir := testutil.CopyTree(t, x86Tree)
	if err := os.WriteFile(filepath.Join(dir, "proc/sys/net/core/somaxconn"), []byte("4096x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := treeFacts(t, dir)
	f.Pid = 31337 // the server in the inspector's namespace, whose somaxconn this is
	rep, err := doctor.Run(context.Background(), f, doctor.Options{Only: []string{"somaxconn"}})
	if err != nil {
		t.Fatal(err)
	}
	fd := rep.Findings[0]
	if fd.Status != doctor.Errored || !strings.Contains(fd.Reason, "/proc/sys/net/core/somaxconn") || !strings.Contains(fd.Reason, `"4096x"`) {
		t.Errorf("%s: %s%s", fd.Status, fd.Message, fd.Reason)
	}
	if !rep.HasErrors() {
		t.Error("the report has no errors")
	}
}

// Whether a read error is a parse error is the error's type, not its
// message: a parse error whose text says "permission denied" is an error,
// a refusal is not checked.
func TestReadErrorKindIsTyped(t *testing.T) {
	for _, tc := range []struct {
		err  host.SourceError
		want doctor.Status
	}{
		{host.SourceError{Source: "interrupts", Path: "/proc/interrupts", Kind: host.KindParse, Error: `line "permission denied" has no "LABEL:"`}, doctor.Errored},
		{host.SourceError{Source: "interrupts", Path: "/proc/interrupts", Kind: host.KindPermission, Error: "open /proc/interrupts: permission denied"}, doctor.NotChecked},
		{host.SourceError{Source: "interrupts", Path: "/proc/interrupts", Error: "read /proc/interrupts: input/output error"}, doctor.NotChecked},
	} {
		f := healthyFacts()
		f.Host.Errors = append(f.Host.Errors, tc.err)
		if fd := run(t, f, "nic-irq-concentration"); fd.Status != tc.want {
			t.Errorf("%+v: %s (%s), want %s", tc.err, fd.Status, fd.Reason, tc.want)
		}
	}
}
