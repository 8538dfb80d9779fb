package steer

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"redline/internal/testutil"
)

// Issue 24, item 13: irqbalance's fallback socket is an abstract address
// any user can bind first; steer then told them which IRQs it moves and
// took their ban list. A socket served by another user is refused.
func TestIrqbalanceSocketOfAnotherUserIsRefused(t *testing.T) {
	testutil.NeedRoot(t)
	py := testutil.NeedPath(t, "/usr/bin/python3") // the system's: another user can run it
	name := "redline-test-irqbalance-" + strconv.Itoa(os.Getpid())
	server := `import socket,sys
s=socket.socket(socket.AF_UNIX,socket.SOCK_STREAM)
s.bind("\0` + name + `")
s.listen(1)
print("ready",flush=True)
c,_=s.accept()
c.recv(1024)
c.sendall(b"SLEEP 10 IRQ 1 2 3 BANNED 30 31")
c.close()
`
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", py, "-c", server)
	cmd.Dir = "/"
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); strings.TrimSpace(line) != "ready" {
		t.Fatalf("the other user's server: %q", line)
	}
	_, err = irqbalanceBanned("@" + name)
	if err == nil || !strings.Contains(err.Error(), "not by root's irqbalance") {
		t.Fatalf("a socket served by uid 65534: %v", err)
	}
}
