package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"redline/internal/testutil"
)

// A /proc/interrupts that does not parse makes the report incomplete: it
// lists the error and doctor exits 2, even though nothing fired.
func TestDoctorParseErrorExitCode(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{"proc/interrupts": "garbage\n", "sys/.keep": ""})
	code, out, errOut := doctorCLI(t, "doctor", "--root", root, "--no-redis")
	if code != ExitError || !strings.Contains(out, "/proc/interrupts") || !strings.Contains(out, "error(s) reading the host") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}

// --iface names a NIC the host must have; --irq-pattern is checked as
// inspect checks it, and maps IRQs the built-in conventions do not.
func TestDoctorIfaceAndIRQPattern(t *testing.T) {
	root := "../../testdata/hosts/realtek-r8125-ifn"
	code, _, errOut := doctorCLI(t, "doctor", "--root", root, "--no-redis", "--iface", "eth9")
	if code != ExitError || !strings.Contains(errOut, `NIC "eth9" is not on host`) || !strings.Contains(errOut, "eth0") {
		t.Errorf("unknown NIC: exit %d, %s", code, errOut)
	}
	// A path is not a NIC name (it would test any file's existence).
	if code, _, errOut := doctorCLI(t, "doctor", "--root", root, "--no-redis", "--iface", "../../../etc"); code != ExitError || !strings.Contains(errOut, "is not a network interface name") {
		t.Errorf("a path as the NIC: exit %d, %s", code, errOut)
	}
	if code, _, errOut := doctorCLI(t, "doctor", "--root", root, "--no-redis", "--irq-pattern", "no-colon"); code != ExitError || !strings.Contains(errOut, "--irq-pattern") {
		t.Errorf("bad pattern: exit %d, %s", code, errOut)
	}
	code, out, errOut := doctorCLI(t, "doctor", "--root", root, "--no-redis", "--iface", "eth0", "--rule", "nic-irq-concentration")
	if code != ExitFailure || !strings.Contains(out, "eth0's 3 queues went to CPU 0") {
		t.Errorf("eth0: exit %d\n%s\n%s", code, out, errOut)
	}
}

// On a tree with two redis-servers, --pid chooses one; a pid the tree does
// not have is an error.
func TestDoctorPidOnTree(t *testing.T) {
	root := "../../testdata/hosts/x86-2socket-mlx5"
	code, out, errOut := doctorCLI(t, "doctor", "--root", root, "--no-redis", "--pid", "40001", "--rule", "irq-redis-overlap")
	if code != ExitFailure || !strings.Contains(out, "pinned within CPUs 20-23") || strings.Contains(out, "31337") {
		t.Errorf("--pid 40001: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut := doctorCLI(t, "doctor", "--root", root, "--no-redis", "--pid", "9"); code != ExitError || !strings.Contains(errOut, "pid 9") {
		t.Errorf("--pid 9: exit %d, %s", code, errOut)
	}
}

// What doctor's IRQ-count rules say on the trees built from real captures
// (testdata/hosts/*/SOURCE cites each): fired where the capture shows the
// problem, ok or not applicable where it does not, and not checked where
// the capture lacks what the rule needs.
func TestDoctorIRQRulesOnCaptures(t *testing.T) {
	tests := []struct {
		tree, rule string
		status     string
		message    string // a part of the message, "" for any
	}{
		// netdev 2024-03-13: "Queue 0 and Queue 2 are both mapped to cpu3";
		// CPU 1 took 114 stray interrupts of 13.8 million.
		// CPU 1's 114 are under a tenth of one queue's even share: free.
		{"azure-mana-4cpu", "nic-irq-sharing", "fired", "queues 0,2 of enP30832s1 share CPU 3 (45% of its queue interrupts) while 1 CPU(s) are free (CPU 1 took 114 (<0.1%))"},
		{"azure-mana-4cpu", "nic-irq-node-split", "not-checked", "topology is absent"},
		// irqbalance spread the 8 queues' channels over all 8 vCPUs: since
		// boot each queue's interrupts went to 3 to 8 of them.
		{"xen-netfront-8queue", "nic-irq-concentration", "fired", "the interrupts of 8 of eth0's 8 queues are spread: each needs 3 or more CPUs (up to 7 of the 8)"},
		// 4 queues on 3 CPUs: the ok says so, not "as many CPUs as queues".
		{"azure-mana-4cpu", "nic-irq-concentration", "ok", "100% of the interrupts of enP30832s1's 4 queues went to 3 CPU(s) (CPU 0,2-3), 90% of each queue's to at most 1 CPU(s)"},
		{"xen-netfront-8queue", "nic-irq-sharing", "ok", ""},
		// One unsplit event channel: one queue, nothing to spread.
		{"xen-netfront-1queue", "nic-irq-concentration", "not-applicable", "eth0 has 1 queue"},
		{"xen-netfront-1queue", "nic-irq-sharing", "not-applicable", ""},
		// The earlier captures.
		{"netutils-igb-ixgbe-2socket", "nic-irq-concentration", "fired", "eth0's 8 queues went to CPU 0"},
		// eth0's 8 queues are all on CPU 0, but queue 6 took 96% of them
		// (3.0 billion) and the other 7 about 16 million each, under a
		// tenth of one queue's even share: one busy queue shares nothing.
		// eth5's queue 28 (5.6 million) beside queue 12 on CPU 28 is light too.
		{"netutils-igb-ixgbe-2socket", "nic-irq-sharing", "ok", ""},
		{"netutils-qlcnic-2socket", "nic-irq-concentration", "fired", "eth0's 4 queues went to CPU 0, 1 of the 48 CPUs"},
		{"netutils-mlx4-bnx2-2socket", "nic-irq-node-split", "fired", "2 of 8 queues of eth0"},
		{"netutils-mlx5-q6700", "nic-irq-concentration", "fired", "enp1s0f0's 4 queues went to CPU 0"},
		// All four completion vectors ~96% on CPU 0; CPUs 1-3 took the
		// rest in small numbers.
		{"netutils-mlx5-q6700", "nic-irq-sharing", "fired", "queues 0,1,2,3 of enp1s0f0 share CPU 0 (100% of its queue interrupts) while 3 CPU(s) are free (CPU 1 took 5482507 (1.1%)"},
		// tg3 eth1's vectors all on CPU 0 of 16; mlx4 eth6's queues split
		// between CPU N (node 0) and N+8 (node 1).
		{"netutils-tg3-mlx4-2socket", "nic-irq-concentration", "fired", "eth1's 4 queues went to CPU 0, 1 of the 16 CPUs"},
		{"netutils-tg3-mlx4-2socket", "nic-irq-node-split", "fired", "8 of 8 queues of eth6"},
		// igb eth3's 8 queues one per even CPU; one NUMA node.
		{"netutils-e1000e-igb-2socket", "nic-irq-sharing", "ok", ""},
		{"netutils-e1000e-igb-2socket", "nic-irq-node-split", "not-applicable", "one NUMA node"},
		// Every queue's interrupts spread over all 4 CPUs (CPU 1 the
		// busiest of each, none over 43%): not concentrated, scattered.
		{"netutils-i40e-e1000e-e3", "nic-irq-concentration", "fired", "the interrupts of 4 of eth0's 4 queues are spread: each needs 3 or more CPUs (up to 4 of the 4)"},
		{"intel-i40e-guest", "nic-irq-concentration", "fired", "enP1s15's 3 queues went to CPU 0"},
		{"realtek-r8125-ifn", "nic-irq-concentration", "fired", "eth0's 3 queues went to CPU 0"},
		{"aws-ena-pcimsix", "nic-irq-concentration", "not-applicable", ""},
		{"vmware-vmxnet3-8cpu", "nic-irq-concentration", "ok", ""},
		{"chelsio-cxgb4-2port", "nic-irq-concentration", "ok", ""},
		// netdev 2021-03-19: the poster pinned rx/tx-1 and rx/tx-2 to CPU 2;
		// CPU 3 took none of eth0's interrupts.
		{"intel-stmmac-4cpu", "nic-irq-sharing", "fired", "queues 1,2 of eth0 share CPU 2"},
		// linux-pci 2025-08-27: six vectors, one per CPU.
		{"nxp-enetc-imx95", "nic-irq-sharing", "ok", ""},
	}
	for _, tt := range tests {
		t.Run(tt.tree+"/"+tt.rule, func(t *testing.T) {
			code, out, errOut := doctorCLI(t, "doctor", "--root", "../../testdata/hosts/"+tt.tree, "--no-redis", "--json", "--rule", tt.rule)
			if code == ExitError {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var rep struct {
				Findings []struct{ ID, Status, Message, Reason string }
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Findings) != 1 {
				t.Fatalf("%v: %s", err, out)
			}
			f := rep.Findings[0]
			text := f.Message + f.Reason
			if f.Status == tt.status && strings.Contains(text, tt.message) {
				return
			}
			t.Errorf("%s %q, want %s %q", f.Status, text, tt.status, tt.message)
		})
	}
}
