package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/doctor"
	"redline/internal/testutil"
)

// evSources joins a finding's evidence sources.
func evSources(fd doctor.Finding) string {
	var s []string
	for _, e := range fd.Evidence {
		s = append(s, e.Source)
	}
	return strings.Join(s, " ")
}

// A NIC whose queues/ directory the capture lacks is named as not checked,
// with the reason; the ok names only the NICs checked, and shows only
// their evidence. (netutils-igb-ixgbe-2socket, eth1's queues/ removed.)
func TestQueueCountNamesUncheckedNICs(t *testing.T) {
	dir := testutil.CopyTree(t, "../../../testdata/hosts/netutils-igb-ixgbe-2socket")
	if err := os.RemoveAll(filepath.Join(dir, "sys/devices/pci0000:00/0000:02:00.1/net/eth1/queues")); err != nil {
		t.Fatal(err)
	}
	f := treeFacts(t, dir)
	if n := f.Host.NIC("eth1"); n == nil || len(n.RxQueues) != 0 {
		t.Fatalf("eth1 still has queues in the copy: %+v", n)
	}
	fd := runOne(t, f, "nic-queue-count")
	if fd.Status != doctor.OK || !strings.Contains(fd.Message, "queue counts of eth0, eth5 fit") ||
		!strings.Contains(fd.Message, "not checked: eth1 (no ethtool -l answer and no queues/rx-* under /sys/class/net/eth1 in this tree)") {
		t.Errorf("%s: %s%s", fd.Status, fd.Message, fd.Reason)
	}
	if strings.Contains(evSources(fd), "eth1") {
		t.Errorf("evidence of an unchecked NIC: %s", evSources(fd))
	}
}

// Every NIC unchecked (no CPU topology in the capture: the cores that
// serve the queues are unknown) is not checked, not ok.
func TestQueueCountAllUnchecked(t *testing.T) {
	fd := runOne(t, treeFacts(t, "../../../testdata/hosts/chelsio-cxgb4-2port"), "nic-queue-count")
	if fd.Status != doctor.NotChecked || !strings.Contains(fd.Reason, "enp5s0f4 (") || !strings.Contains(fd.Reason, "enp5s0f4d1 (") {
		t.Errorf("%s: %s%s", fd.Status, fd.Message, fd.Reason)
	}
}

// xps on x86-2socket-mlx5: ens2f0np0's XPS maps are read and local; eno1,
// here taken as up (the capture has it down), has no queues/ in the copy:
// the ok names ens2f0np0 only and eno1 as not checked. Without
// ens2f0np0's queues/ too, nothing is checked: not checked.
func TestXPSNamesUncheckedNICs(t *testing.T) {
	dir := testutil.CopyTree(t, x86Tree)
	net := filepath.Join(dir, "sys/devices/pci0000:3a/0000:3a:00.0/0000:3d:00.0/net/eno1/queues")
	if err := os.RemoveAll(net); err != nil {
		t.Fatal(err)
	}
	f := treeFacts(t, dir)
	f.Host.NIC("eno1").OperState = "up"
	fd := runOne(t, f, "xps")
	if fd.Status != doctor.OK || !strings.Contains(fd.Message, "every TX queue of ens2f0np0 has") ||
		!strings.Contains(fd.Message, "not checked: eno1 (no queues/tx-* under /sys/class/net/eno1 in this tree)") {
		t.Errorf("%s: %s%s", fd.Status, fd.Message, fd.Reason)
	}
	if strings.Contains(evSources(fd), "eno1") {
		t.Errorf("evidence of an unchecked NIC: %s", evSources(fd))
	}
	if err := os.RemoveAll(filepath.Join(dir, "sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0/net/ens2f0np0/queues")); err != nil {
		t.Fatal(err)
	}
	f = treeFacts(t, dir)
	f.Host.NIC("eno1").OperState = "up"
	if fd := runOne(t, f, "xps"); fd.Status != doctor.NotChecked || !strings.Contains(fd.Reason, "ens2f0np0 (no queues/tx-*") {
		t.Errorf("no NIC checked: %s: %s%s", fd.Status, fd.Message, fd.Reason)
	}
}
