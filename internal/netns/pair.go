package netns

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"redline/internal/trusted"
)

// Pair is two network namespaces joined by a veth pair: a server host and
// a client host, like the write-ups' two directly connected machines.
type Pair struct {
	Server, Client     string // namespace names
	ServerIf, ClientIf string // veth ends
	ServerIP, ClientIP string
}

// namePrefix marks namespaces this package made; the pid after it tells
// whether their owner is still alive.
const namePrefix = "rl-"

// PairOptions shape the link of NewPair.
type PairOptions struct {
	// Queues gives each veth end that many rx and tx queues and turns
	// GRO on and TSO/GSO off at both ends, so received packets go through
	// NAPI (net:napi_gro_receive_entry fires with their queue), as on a
	// multi-queue NIC: what redline steer samples. 0 or 1 is the kernel's
	// default single-queue veth.
	Queues int
}

// NewPair creates the namespaces and the link (shaped by the options,
// if given), brings everything up and checks the client reaches the
// server. On failure it removes what it made.
func NewPair(ctx context.Context, opts ...PairOptions) (*Pair, error) {
	var o PairOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	id := strconv.Itoa(os.Getpid())
	p := &Pair{
		Server: namePrefix + id + "-srv", Client: namePrefix + id + "-cli",
		ServerIf: "rl" + id + "s", ClientIf: "rl" + id + "c",
		ServerIP: "10.77.0.1", ClientIP: "10.77.0.2",
	}
	link := []string{"link", "add", p.ServerIf, "type", "veth", "peer", "name", p.ClientIf}
	if o.Queues > 1 {
		q := strconv.Itoa(o.Queues)
		link = []string{"link", "add", p.ServerIf, "numrxqueues", q, "numtxqueues", q, "type", "veth",
			"peer", "name", p.ClientIf, "numrxqueues", q, "numtxqueues", q}
	}
	steps := [][]string{
		{"netns", "add", p.Server},
		{"netns", "add", p.Client},
		link,
		{"link", "set", p.ServerIf, "netns", p.Server},
		{"link", "set", p.ClientIf, "netns", p.Client},
		{"-n", p.Server, "addr", "add", p.ServerIP + "/30", "dev", p.ServerIf},
		{"-n", p.Client, "addr", "add", p.ClientIP + "/30", "dev", p.ClientIf},
		{"-n", p.Server, "link", "set", "lo", "up"},
		{"-n", p.Client, "link", "set", "lo", "up"},
	}
	if o.Queues > 1 {
		steps = append(steps,
			[]string{"netns", "exec", p.Server, "ethtool", "-K", p.ServerIf, "gro", "on", "tso", "off", "gso", "off"},
			[]string{"netns", "exec", p.Client, "ethtool", "-K", p.ClientIf, "gro", "on", "tso", "off", "gso", "off"})
	}
	steps = append(steps,
		[]string{"-n", p.Server, "link", "set", p.ServerIf, "up"},
		[]string{"-n", p.Client, "link", "set", p.ClientIf, "up"})
	for _, s := range steps {
		if err := ip(ctx, s...); err != nil {
			p.Remove()
			return nil, fmt.Errorf("set up network namespaces: %w", err)
		}
	}
	return p, nil
}

// Remove deletes both namespaces (which deletes the veth pair). It is
// safe to call more than once.
func (p *Pair) Remove() error {
	var first error
	for _, ns := range []string{p.Server, p.Client} {
		if _, err := os.Stat(Path(ns)); err != nil {
			continue
		}
		if err := ip(context.Background(), "netns", "del", ns); err != nil && first == nil {
			first = err
		}
	}
	// A veth end left in the root namespace by a half-done set-up.
	if _, err := os.Stat("/sys/class/net/" + p.ServerIf); err == nil {
		ip(context.Background(), "link", "del", p.ServerIf)
	}
	return first
}

// RemoveStale deletes namespaces made by earlier runs whose process is gone
// (after a crash or SIGKILL) and returns their names.
func RemoveStale() []string {
	entries, err := os.ReadDir(Dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		name := e.Name()
		rest, ok := strings.CutPrefix(name, namePrefix)
		if !ok {
			continue
		}
		pidStr, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
			continue
		}
		if ip(context.Background(), "netns", "del", name) == nil {
			removed = append(removed, name)
		}
	}
	return removed
}

func ip(ctx context.Context, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	p, err := trusted.Program("ip")
	if err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, p, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s (is iproute2 installed, and are we root?)", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
