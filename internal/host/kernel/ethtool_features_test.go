package kernel

import (
	"maps"
	"net"
	"testing"

	"github.com/safchain/ethtool"
	"golang.org/x/sys/unix"
)

// The features read with the names once per Read are those the ethtool
// library reads for each NIC, on every interface of this machine.
func TestLiveEthtoolFeatures(t *testing.T) {
	et, err := ethtool.NewEthtool()
	if err != nil {
		t.Skipf("no ethtool socket: %v", err)
	}
	defer et.Close()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	fr := &featureReader{fd: fd}
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, ifc := range ifs {
		want, werr := et.Features(ifc.Name)
		got, gerr := fr.features(ifc.Name)
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%s: library error %v, ours %v", ifc.Name, werr, gerr)
			continue
		}
		delete(want, "")
		if werr == nil && !maps.Equal(got, want) {
			t.Errorf("%s: %v\nlibrary %v", ifc.Name, got, want)
		}
		compared++
	}
	if compared == 0 || len(fr.names) == 0 {
		t.Fatalf("no interface compared (%d names)", len(fr.names))
	}
	t.Logf("%d interfaces, %d feature names", compared, len(fr.names))
	if _, err := fr.features("no-such-if0"); err == nil {
		t.Error("a missing interface answered")
	}
	if _, err := fr.features("an-interface-name-too-long"); err == nil {
		t.Error("a name longer than IFNAMSIZ was sent")
	}
}
