package cli

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"redline/internal/host"
	"redline/internal/netns"
	"redline/internal/testutil"
)

// TestNetNSReadsItsOwnNICs: doctor --netns NS listed the host's NICs
// (from the host's /sys) and failed to read each of them there ("addresses
// eth0: no such network interface in the netlink dump"), exit 2 (issue
// 41). Now /sys is a sysfs mounted in NS, in a mount namespace of the
// reading thread's own: inspect lists NS's veth end and not the host's
// NICs, doctor has no NIC read error, and the host's mount table is as it
// was.
func TestNetNSReadsItsOwnNICs(t *testing.T) {
	testutil.NeedRoot(t)
	pair, err := netns.NewPair(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pair.Remove() })
	mounts, _ := os.ReadFile("/proc/self/mountinfo")

	out, errOut, code := runCLI(t, context.Background(), nil, "inspect", "--netns", pair.Server, "--json")
	if code != 0 {
		t.Fatalf("inspect --netns: exit %d: %s", code, errOut)
	}
	var snap host.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range snap.NICs {
		names = append(names, n.Name)
	}
	if !strings.Contains(strings.Join(names, " "), pair.ServerIf) || strings.Contains(strings.Join(names, " "), pair.ClientIf) {
		t.Errorf("NICs in %s: %v, want its veth end %s and not the peer's %s", pair.Server, names, pair.ServerIf, pair.ClientIf)
	}
	for _, e := range snap.Errors {
		if strings.HasPrefix(e.Source, "addresses ") || strings.HasPrefix(e.Source, "nic ") || strings.HasPrefix(e.Source, "ethtool ") {
			t.Errorf("inspect --netns read error: %+v", e)
		}
	}

	out, errOut, code = runCLI(t, context.Background(), nil, "doctor", "--netns", pair.Server, "--fail-on", "never")
	if code != 0 || strings.Contains(out+errOut, "no such network interface") || strings.Contains(out, "Errors reading the host") {
		t.Errorf("doctor --netns: exit %d:\n%s\n%s", code, out, errOut)
	}
	if after, _ := os.ReadFile("/proc/self/mountinfo"); string(after) != string(mounts) {
		t.Errorf("the host's mount table changed:\nbefore\n%s\nafter\n%s", mounts, after)
	}
}

// TestNICsNotCheckedWords: where no sysfs of the namespace can be mounted,
// its NICs are left out with one "not checked" line, not an error per NIC.
func TestNICsNotCheckedWords(t *testing.T) {
	s := &host.Snapshot{NICs: []host.NIC{{Name: "eth0"}}, Errors: []host.SourceError{
		{Source: "addresses eth0", Error: "no such network interface in the netlink dump"},
		{Source: "ethtool eth0", Error: "no such device"},
		{Source: "interrupts", Error: "kept"}}}
	host.NICsNotChecked(s, "not checked: why")
	if len(s.NICs) != 0 || len(s.Errors) != 2 || s.Errors[0].Source != "interrupts" || s.Errors[1].Kind != host.KindNotChecked {
		t.Errorf("%+v", s)
	}
}
