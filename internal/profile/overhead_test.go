package profile

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"redline/internal/testutil"
)

// BenchmarkPerfOverhead is what perf attached to a process costs it: CPU
// ns per 1-byte read(2) of /dev/zero (getrusage, so a loaded machine's
// queueing is not counted), alone, with the syscall counting of
// CountSyscalls attached, and with Record's perf record -F 999 -g.
//
//	go test -run '^$' -bench PerfOverhead -benchtime 3000000x ./internal/profile/
func BenchmarkPerfOverhead(b *testing.B) {
	testutil.Need(b, DefaultPerf)
	events := make([]string, len(DefaultSyscalls))
	for i, s := range DefaultSyscalls {
		events[i] = "syscalls:sys_enter_" + s
	}
	pid := strconv.Itoa(os.Getpid())
	for _, c := range []struct {
		name string
		argv []string
	}{
		{"alone", nil},
		{"syscall-counting", []string{DefaultPerf, "stat", "-x", ",", "-e", strings.Join(events, ","), "-p", pid}},
		{"perf-record", []string{DefaultPerf, "record", "-F", "999", "-g", "-p", pid, "--no-buildid-cache", "-o", os.DevNull}},
	} {
		b.Run(c.name, func(b *testing.B) { benchReads(b, c.argv) })
	}
}

func benchReads(b *testing.B, perf []string) {
	fd, err := syscall.Open("/dev/zero", syscall.O_RDONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer syscall.Close(fd)
	if perf != nil {
		cmd := exec.Command(perf[0], perf[1:]...)
		cmd.Env = append(os.Environ(), "DEBUGINFOD_URLS=")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
		// perf has no readiness signal; a benchmark may wait a guessed
		// time for it to attach (a test may not).
		time.Sleep(500 * time.Millisecond)
	}
	buf := make([]byte, 1)
	p := uintptr(unsafe.Pointer(&buf[0]))
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b.ResetTimer()
	for range b.N {
		syscall.Syscall(syscall.SYS_READ, uintptr(fd), p, 1)
	}
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano()
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/read")
}
