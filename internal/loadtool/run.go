// Package loadtool runs another program as a lab's load, redis-benchmark
// (or memtier_benchmark, whose output it reads but which Debian 12 does
// not package), with the environment the scenario gives it (an LD_PRELOAD
// applies to the load's process, which redline's own bench, making raw
// system calls, would not notice), and reads its output into redline's
// summary. It records which tool measured and how precisely.
package loadtool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"redline/internal/benchdata"
	"redline/internal/trusted"
)

// Tool is a load program redline can run.
type Tool struct {
	Name string
	// Precision says what the tool's figures can resolve, for the report.
	Precision string
	argv      func(r Request, host, port string) ([]string, error)
	parse     func(out []byte, r Request) (*benchdata.Summary, error)
}

// Tools are the programs a scenario's client.tool may name ("redline",
// the default, is redline's own bench and not here).
var Tools = map[string]Tool{
	"redis-benchmark": {Name: "redis-benchmark",
		Precision: "redis-benchmark --csv: throughput a float32 over whole elapsed milliseconds (±1 ms of the run); " +
			"latencies in ms to 1 µs from an HDR histogram of 3 significant digits, clamped at 3 s; " +
			"under -P every reply of a batch gets the batch's time to first byte",
		argv: benchmarkArgv, parse: parseBenchmark},
	"memtier_benchmark": {Name: "memtier_benchmark",
		Precision: "memtier_benchmark: ops/sec to 0.01; latencies in ms to 10 ns as printed (%.5f), from per-request HDR histograms",
		argv:      memtierArgv, parse: parseMemtier},
}

// Request is one run of a tool.
type Request struct {
	Tool string
	// Args are the workload line's arguments for the tool, without its
	// program name; the target's host and port replace the line's.
	Args []string
	// Test is the redis-benchmark test (the title redline gives it, as
	// PING_INLINE, SET): the tool runs only that one.
	Test string
	Addr string
	Env  []string
	// Started, when set, is called with the tool's pid once it runs and
	// every LD_PRELOAD library is mapped in it (or it has exited).
	Started func(pid int)
}

// Result is a run: its summary, the command run, and what was preloaded.
type Result struct {
	Summary *benchdata.Summary
	Argv    []string
	// Preloaded are the LD_PRELOAD libraries seen mapped in the tool's
	// process (/proc/PID/maps).
	Preloaded []string
}

// Run runs the tool once and reads its output.
func Run(ctx context.Context, r Request) (*Result, error) {
	t, ok := Tools[r.Tool]
	if !ok {
		return nil, fmt.Errorf("unknown load tool %q (redis-benchmark, memtier_benchmark)", r.Tool)
	}
	path, err := trusted.Program(t.Name)
	if err != nil {
		return nil, fmt.Errorf("%s not found: %w (redis-benchmark: apt-get install -y redis-tools; memtier_benchmark is not packaged in Debian 12)", t.Name, err)
	}
	host, port, err := net.SplitHostPort(r.Addr)
	if err != nil {
		return nil, err
	}
	args, err := t.argv(r, host, port)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out, errOut := &cappedBuffer{kill: cancel}, &cappedBuffer{kill: cancel}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = append(os.Environ(), r.Env...), out, errOut
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	res := &Result{Argv: append([]string{path}, args...)}
	res.Preloaded = waitMapped(cmd.Process.Pid, preloads(r.Env))
	if r.Started != nil {
		r.Started(cmd.Process.Pid)
	}
	err = cmd.Wait()
	if out.over || errOut.over {
		return nil, fmt.Errorf("%s wrote more than %d bytes of output, more than any run of it prints: stopped", t.Name, maxOutput)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %s", t.Name, err, lastLine(errOut.b.String()))
	}
	if res.Summary, err = t.parse(out.b.Bytes(), r); err != nil {
		return nil, err
	}
	return res, nil
}

// maxOutput bounds what is kept of the tool's stdout and of its stderr:
// redis-benchmark --csv prints a few lines, memtier_benchmark a progress
// line a second, far below it.
const maxOutput = 16 << 20

// cappedBuffer keeps a tool's output up to maxOutput and ends the tool
// past it: a tool that prints without end must not grow redline with it.
type cappedBuffer struct {
	b    bytes.Buffer
	over bool
	kill func()
}

var errTooMuchOutput = errors.New("output beyond its limit")

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if c.b.Len()+len(p) > maxOutput {
		c.over = true
		c.kill()
		return 0, errTooMuchOutput
	}
	return c.b.Write(p)
}

func preloads(env []string) []string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "LD_PRELOAD="); ok {
			return strings.FieldsFunc(v, func(c rune) bool { return c == ':' || c == ' ' })
		}
	}
	return nil
}

// waitMapped waits until every lib is mapped in pid, or pid has exited
// (the dynamic loader maps preloads before main, so a running tool has
// them soon after exec), and returns those seen.
func waitMapped(pid int, libs []string) []string {
	if len(libs) == 0 {
		return nil
	}
	var seen []string
	for {
		maps, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
		seen = seen[:0]
		for _, lib := range libs {
			if bytes.Contains(maps, []byte(lib)) {
				seen = append(seen, lib)
			}
		}
		if err != nil || len(seen) == len(libs) || exited(maps) {
			return seen
		}
		time.Sleep(time.Millisecond)
	}
}

// exited: a zombie's maps are empty.
func exited(maps []byte) bool { return len(maps) == 0 }

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
