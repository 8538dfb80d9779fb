package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"redline/internal/host"
	"redline/internal/steer"
	"redline/internal/testutil"
	"redline/internal/tune"
)

// pinger sends ICMP echo requests to gw and reads the replies, as fast as
// they come, until killed: packets that arrive on the NIC's receive queue
// and are copied to user space (skb_copy_datagram_iovec) by this process.
func pinger(gw string) int {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pinger:", err)
		return 1
	}
	ip := net.ParseIP(gw).To4()
	to := &unix.SockaddrInet4{Addr: [4]byte(ip)}
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 100000})
	buf := make([]byte, 1500)
	for seq := uint16(0); ; seq++ {
		pkt := make([]byte, 8+32)
		pkt[0] = 8 // echo request
		binary.BigEndian.PutUint16(pkt[4:], uint16(os.Getpid()))
		binary.BigEndian.PutUint16(pkt[6:], seq)
		binary.BigEndian.PutUint16(pkt[2:], icmpChecksum(pkt))
		if err := unix.Sendto(fd, pkt, 0, to); err != nil {
			fmt.Fprintln(os.Stderr, "pinger:", err)
			return 1
		}
		unix.Read(fd, buf)
	}
}

func icmpChecksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return ^uint16(sum)
}

// defaultGateway reads the IPv4 default route's gateway and device.
func defaultGateway(t *testing.T) (gw net.IP, dev string) {
	b, err := os.ReadFile("/proc/net/route")
	if err != nil {
		t.Skip(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 2 && f[1] == "00000000" {
			v, _ := strconv.ParseUint(f[2], 16, 32)
			return net.IPv4(byte(v), byte(v>>8), byte(v>>16), byte(v>>24)), f[0]
		}
	}
	t.Skip("no IPv4 default route")
	return nil, ""
}

func readAffinity(t *testing.T, irq int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/irq/" + strconv.Itoa(irq) + "/smp_affinity_list")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// startRedline runs redline (this test binary as redline, the code of
// the real binary) with args.
func startRedline(t *testing.T, stderr *syncBuffer, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "REDLINE_TEST_MAIN=1")
	cmd.Stderr = stderr
	if err := testutil.StartSignallable(cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// TestSteerKilledRestoredOnHost runs redline steer on this machine's real
// NIC (REDLINE_TEST_HOST_WRITES=1), waits until it moved the receive
// queue's IRQ, kills it with SIGKILL, and checks that the next redline
// steer puts the IRQ back before it does anything else; then again with
// redline tune rollback. The traffic is ICMP echo replies from the
// default gateway, read by a helper process pinned to the CPU the
// queue's IRQ is delivered on and named to steer as the process to steer
// for (--pid): steer keeps its cores free of queue IRQs, so after
// --periods periods it moves the IRQ to another core. This works on a
// one-node machine, and on any machine whose gateway answers pings.
func TestSteerKilledRestoredOnHost(t *testing.T) {
	testutil.HostWrites(t)
	tfs, err := steer.OpenTracefs()
	if err != nil {
		t.Skipf("tracefs: %v", err)
	}
	tfs.Close()
	gw, dev := defaultGateway(t)
	fs, err := host.NewFS("/")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := host.Read(fs, host.Options{NoProcesses: true})
	if err != nil {
		t.Fatal(err)
	}
	var q *steer.QueueIRQ
	for _, qi := range steer.QueueIRQsOf(snap) {
		if qi.Queue.Dev == dev && qi.Effective != nil && qi.Effective.Len() == 1 {
			q = &qi
			break
		}
	}
	if topo, _ := steer.TopologyIn(snap, steer.DomainNode); q == nil || len(topo.CPUs) < 2 {
		t.Skipf("needs a receive-queue IRQ of %s with one effective CPU and 2 CPUs", dev)
	}
	orig := readAffinity(t, q.IRQ)
	t.Cleanup(func() { // the safety net under steer's own restore
		if now := readAffinity(t, q.IRQ); now != orig {
			t.Errorf("irq %d left at %s; putting back %s", q.IRQ, now, orig)
			os.WriteFile("/proc/irq/"+strconv.Itoa(q.IRQ)+"/smp_affinity_list", []byte(orig), 0)
		}
	})
	dir := t.TempDir()
	state, status := dir+"/state", dir+"/steer.json"
	for _, then := range []string{"next steer", "tune rollback"} {
		// Where the kernel delivers the IRQ now (writing a multi-CPU
		// affinity back lets it pick again).
		eff, err := os.ReadFile("/proc/irq/" + strconv.Itoa(q.IRQ) + "/effective_affinity_list")
		if err != nil {
			t.Fatal(err)
		}
		on := strings.TrimSpace(string(eff))
		if _, err := strconv.Atoi(on); err != nil {
			t.Skipf("irq %d is delivered on %q, not one CPU", q.IRQ, on)
		}
		ping := exec.Command("taskset", "-c", on, os.Args[0])
		ping.Env = append(os.Environ(), "REDLINE_TEST_PINGER="+gw.String())
		if err := ping.Start(); err != nil {
			t.Skipf("taskset: %v", err)
		}
		t.Cleanup(func() { ping.Process.Kill(); ping.Wait() })
		steerArgs := func(period string) []string {
			return []string{"steer", "--pid", strconv.Itoa(ping.Process.Pid), "--period", period, "--periods", "2",
				"--min-packets", "10", "--sample", "1", "--state-dir", state, "--status-file", status}
		}
		var errb syncBuffer
		cmd := startRedline(t, &errb, steerArgs("200ms")...)
		// Steer's move, journaled: an affinity changed by anything else
		// (a lab or steer beside this test) gives the next steer nothing
		// to roll back.
		waitFor(t, fmt.Sprintf("steer to move irq %d and journal it (on CPU %s, traffic from %s)", q.IRQ, on, gw),
			func() bool { return readAffinity(t, q.IRQ) != orig && journaledMove(t, state, q.IRQ) })
		time.Sleep(100 * time.Millisecond) // a kill in the middle of an apply is the journal's business, not this test's
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		movedTo := readAffinity(t, q.IRQ)
		if movedTo == orig {
			t.Fatalf("irq %d back at %s right after kill -9: nothing to recover", q.IRQ, orig)
		}
		switch then {
		case "next steer":
			// A long period: the check comes before it could move anything again.
			var errb2 syncBuffer
			next := startRedline(t, &errb2, steerArgs("1h")...)
			exited := make(chan struct{})
			go func() { next.Wait(); close(exited) }()
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("the next steer's stderr:\n%s", errb2.String())
				}
			})
			waitFor(t, "the next steer to roll back", func() bool {
				select {
				case <-exited:
					t.Fatalf("the next steer ended before it rolled back anything")
				default:
				}
				return strings.Contains(errb2.String(), "rolled back")
			})
			if got := readAffinity(t, q.IRQ); got != orig {
				t.Fatalf("after kill -9 and a new steer: irq %d at %s, want %s\n%s", q.IRQ, got, orig, errb2.String())
			}
			next.Process.Signal(syscall.SIGTERM)
			<-exited
		case "tune rollback":
			_, stderr, code := runCLI(t, context.Background(), nil, "tune", "rollback", "--state-dir", state)
			if got := readAffinity(t, q.IRQ); code != 0 || got != orig {
				t.Fatalf("after kill -9 and tune rollback (exit %d): irq %d at %s, want %s\n%s", code, q.IRQ, got, orig, stderr)
			}
		}
		ping.Process.Kill()
		ping.Wait()
		t.Logf("%s: irq %d moved %s -> %s by steer, killed, restored to %s", then, q.IRQ, orig, movedTo, readAffinity(t, q.IRQ))
	}
}

// journaledMove reports whether the journal in state holds a move of irq
// that is still in place (the live value is the one journaled).
func journaledMove(t *testing.T, state string, irq int) bool {
	t.Helper()
	rep, err := tune.Journaled(context.Background(), tune.StatusOptions{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	target := "/proc/irq/" + strconv.Itoa(irq) + "/smp_affinity_list"
	for _, s := range rep.Sessions {
		for _, c := range s.Changes {
			if c.Change.Target == target && c.Status == tune.StatusApplied {
				return true
			}
		}
	}
	return false
}

// syncBuffer is a child's stderr, read while the child writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
