package rules

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"redline/internal/doctor"
	"redline/internal/host"
)

// x86Tree is the fixture tree with two redis-servers: pid 31337 unpinned
// (free to run on any CPU; its threads last ran on CPUs 3,25,44,66) in
// the inspector's network namespace, pid 40001 in a container pinned to
// CPUs 20-23 of the NIC's node, in a network namespace of its own.
const x86Tree = "../../../testdata/hosts/x86-2socket-mlx5"

func fixPins(t *testing.T, fd doctor.Finding) []int {
	t.Helper()
	if fd.Fix == nil || len(fd.Fix.Changes) == 0 {
		t.Fatalf("%s: no fix changes: %s%s %+v", fd.ID, fd.Message, fd.Reason, fd.Fix)
	}
	var cpus []int
	for _, c := range fd.Fix.Changes {
		n, err := strconv.Atoi(c.Value)
		if err != nil {
			t.Fatalf("%s: %s = %q", fd.ID, c.Target, c.Value)
		}
		cpus = append(cpus, n)
	}
	return cpus
}

// The IRQ fixes keep off every redis-server's CPUs (the pinned one's:
// an unpinned server may run anywhere), not only the first server's;
// --pid keeps off the chosen one's only.
func TestIRQFixesAvoidEveryServer(t *testing.T) {
	f := treeFacts(t, x86Tree)
	if len(f.Host.Processes) != 2 {
		t.Fatalf("%d redis-servers in the tree, want 2", len(f.Host.Processes))
	}
	avoid := host.NewCPUSet(20, 21, 22, 23)
	for _, cpu := range fixPins(t, runOne(t, f, "nic-irq-affinity")) {
		if avoid.Contains(cpu) {
			t.Errorf("nic-irq-affinity pins a queue IRQ on CPU %d, a redis-server's", cpu)
		}
	}
	// irq-redis-overlap judges each server; server 40001's fix keeps the
	// IRQs off its own CPUs.
	rep, err := doctor.Run(context.Background(), f, doctor.Options{Only: []string{"irq-redis-overlap"}})
	if err != nil {
		t.Fatal(err)
	}
	fired := 0
	for _, fd := range rep.Findings {
		if fd.Status != doctor.Fired {
			continue
		}
		fired++
		if fd.Pid != 40001 {
			t.Errorf("fired for pid %d, want 40001 (the pinned one)", fd.Pid)
		}
		for _, cpu := range fixPins(t, fd) {
			if avoid.Contains(cpu) {
				t.Errorf("irq-redis-overlap pid %d: fix pins an IRQ on CPU %d, a redis-server's", fd.Pid, cpu)
			}
		}
	}
	if fired != 1 || len(rep.Findings) != 2 {
		t.Errorf("%d findings, %d fired; want one per server, one fired", len(rep.Findings), fired)
	}
	// --pid 31337: only that (unpinned) server counts, so the pinned
	// container's CPUs 20-23 are the node's first cores again.
	f.Pid = 31337
	onContainer := false
	for _, cpu := range fixPins(t, runOne(t, f, "nic-irq-affinity")) {
		onContainer = onContainer || avoid.Contains(cpu)
	}
	if !onContainer {
		t.Error("--pid 31337: the other server's CPUs were avoided too")
	}
}

// Network-namespace rules judge each namespace the servers are in: the
// container's somaxconn (511) and its accept-queue overflows are its own.
func TestNetNSRulesJudgeEveryNamespace(t *testing.T) {
	f := treeFacts(t, x86Tree)
	rep, err := doctor.Run(context.Background(), f, doctor.Options{Only: []string{"somaxconn", "listen-overflow"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]doctor.Finding{}
	for _, fd := range rep.Findings {
		got[fd.ID+" "+strconv.Itoa(fd.Pid)] = fd
	}
	if fd := got["somaxconn 40001"]; len(fd.Evidence) == 0 || fd.Evidence[0].Value != "511" {
		t.Errorf("somaxconn of pid 40001's namespace: %+v", fd)
	}
	if fd := got["somaxconn 31337"]; len(fd.Evidence) == 0 || fd.Evidence[0].Value != "4096" {
		t.Errorf("somaxconn of the inspector's namespace: %+v", fd)
	}
	if got["listen-overflow 40001"].Status != doctor.Fired || got["listen-overflow 31337"].Status != doctor.OK {
		t.Errorf("listen-overflow: 40001 %s, 31337 %s", got["listen-overflow 40001"].Status, got["listen-overflow 31337"].Status)
	}
	// Servers sharing one namespace are judged once, naming both.
	second := f.Host.Processes[0]
	second.PID = 31400
	f.Host.Processes = append(f.Host.Processes, second)
	rep, err = doctor.Run(context.Background(), f, doctor.Options{Only: []string{"somaxconn"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 2 {
		t.Errorf("%d somaxconn findings for two namespaces", len(rep.Findings))
	}
}

// The report, fixes included, is the same on every run, also when the
// unpinned server's threads ran on other CPUs at the next look (the
// scheduler moves them): no fix follows them.
func TestSeveralServersReportIsStable(t *testing.T) {
	var first []byte
	for i := 0; i < 3; i++ {
		f := treeFacts(t, x86Tree)
		for j := range f.Host.Processes[0].Threads {
			if th := &f.Host.Processes[0].Threads[j]; th.CPU != nil && i > 0 {
				cpu := (*th.CPU + 17*i) % 80
				th.CPU = &cpu
			}
		}
		rep, err := doctor.Run(context.Background(), f, doctor.Options{Only: []string{"nic-irq-*", "irq-redis-overlap", "xps", "rps"}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(rep.Findings)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b
		} else if string(b) != string(first) {
			t.Fatalf("run %d differs from the first", i)
		}
	}
}
