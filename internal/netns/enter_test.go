package netns

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"redline/internal/testutil"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// newNS makes a namespace for one test, with somaxconn set to a value the
// host does not have, and returns its name and that value.
func newNS(t *testing.T) (name, somaxconn string) {
	t.Helper()
	testutil.NeedRoot(t)
	name = fmt.Sprintf("redline-nstest-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"))
	run(t, "ip", "netns", "add", name)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	somaxconn = "1234"
	if hostSomaxconn(t) == somaxconn {
		somaxconn = "1235"
	}
	run(t, "ip", "netns", "exec", name, "sysctl", "-qw", "net.core.somaxconn="+somaxconn)
	return name, somaxconn
}

func run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
}

func hostSomaxconn(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/net/core/somaxconn")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// threadNS names the namespace of the thread running the caller, as
// "net:[INODE]"; one system call, so it cannot straddle a thread switch.
func threadNS(t *testing.T) string {
	s, err := os.Readlink("/proc/thread-self/ns/net")
	if err != nil {
		t.Error(err)
	}
	return s
}

func readSomaxconn() (string, error) {
	b, err := os.ReadFile("/proc/sys/net/core/somaxconn")
	return strings.TrimSpace(string(b)), err
}

// Do reads the namespace's own sysctl whether the namespace is given by
// name, by path or by a process inside it, and leaves the caller's alone.
func TestDoEntersByNamePathAndPid(t *testing.T) {
	name, want := newNS(t)
	host := hostSomaxconn(t)
	sleep := exec.Command("ip", "netns", "exec", name, "sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	var st unix.Stat_t
	if err := unix.Stat(Path(name), &st); err != nil {
		t.Fatal(err)
	}
	// "ip netns exec" enters the namespace before it execs sleep.
	wantLink := "net:[" + strconv.FormatUint(st.Ino, 10) + "]"
	for deadline := time.Now().Add(10 * time.Second); ; {
		l, _ := os.Readlink(PidPath(sleep.Process.Pid))
		if l == wantLink {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sleep never entered %s", name)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, ns := range []string{name, Path(name), PidPath(sleep.Process.Pid)} {
		var got string
		err := Do(ns, func() (err error) {
			got, err = readSomaxconn()
			return err
		})
		if err != nil || got != want {
			t.Errorf("Do(%s): somaxconn %q, %v; want %s", ns, got, err, want)
		}
	}
	if now := hostSomaxconn(t); now != host {
		t.Errorf("host somaxconn %s after Do, was %s", now, host)
	}
	if err := Do("no-such-namespace-here", func() error { return nil }); err == nil {
		t.Error("entering a missing namespace succeeded")
	}
}

// Many goroutines entering at once each see the namespace inside fn, and
// goroutines that never asked for it never run in it.
func TestDoConcurrentNeverLeaksNamespace(t *testing.T) {
	name, _ := newNS(t)
	var st unix.Stat_t
	if err := unix.Stat(Path(name), &st); err != nil {
		t.Fatal(err)
	}
	inside := "net:[" + strconv.FormatUint(st.Ino, 10) + "]"
	outside := threadNS(t)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var checkers sync.WaitGroup
	for range 8 {
		checkers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if got := threadNS(t); got != outside {
					t.Errorf("a goroutine outside Do ran in %s", got)
					return
				}
			}
		})
	}
	for range 32 {
		wg.Go(func() {
			for range 50 {
				err := Do(name, func() error {
					if got := threadNS(t); got != inside {
						return fmt.Errorf("inside Do the thread is in %s, want %s", got, inside)
					}
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
				if got := threadNS(t); got != outside {
					t.Errorf("after Do a goroutine ran in %s", got)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	checkers.Wait()
}

// When the thread cannot go back, Do says so and the thread is destroyed
// rather than handed to another goroutine. The main thread is the
// exception the runtime makes: it is wedged for good instead, so a second
// try, which cannot run on it any more, must end its thread.
func TestDoRetiresThreadThatCannotGoBack(t *testing.T) {
	name, _ := newNS(t)
	calls := 0
	setns = func(fd, nstype int) error {
		calls++
		if calls%2 == 0 { // the way back
			return unix.EPERM
		}
		return unix.Setns(fd, nstype)
	}
	t.Cleanup(func() { setns = unix.Setns })
	tid := 0
	for try := 0; try < 2 && (tid == 0 || tid == os.Getpid()); try++ {
		err := Do(name, func() error {
			tid = unix.Gettid()
			return nil
		})
		if !errors.Is(err, unix.EPERM) {
			t.Fatalf("Do = %v, want the failed restore", err)
		}
	}
	if tid == os.Getpid() {
		t.Fatal("the main thread ran Do again after it was left in the namespace")
	}
	task := fmt.Sprintf("/proc/self/task/%d", tid)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := os.Stat(task); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread %d still alive in namespace %s", tid, name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
