package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// runCLI runs redline in-process and returns its stdout, stderr and exit
// code.
func runCLI(t *testing.T, ctx context.Context, stdin io.Reader, args ...string) (string, string, int) {
	t.Helper()
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	var out, errb bytes.Buffer
	code := run(ctx, args, &streams{in: stdin, out: &out, err: &errb})
	return out.String(), errb.String(), code
}
