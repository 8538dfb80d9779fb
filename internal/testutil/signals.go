package testutil

import (
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// StartSignallable starts cmd with SIGINT and SIGHUP at their default
// action, for a test that sends them to it: a child inherits an ignored
// signal, and the test binary has them ignored when the suite was started
// by nohup (SIGHUP) or as `make test &` from a script (SIGINT), where the
// child (redline, which keeps an inherited ignore) would go on as if
// nothing was sent. While this process has a handler for a signal, a
// child it starts gets the default action (the Go runtime resets handled
// signals in the child after fork); the handler goes once cmd started.
func StartSignallable(cmd *exec.Cmd) error {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(c)
	return cmd.Start()
}
