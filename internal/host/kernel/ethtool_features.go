package kernel

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The offload features `ethtool -k IF` prints come from two SIOCETHTOOL
// queries (include/uapi/linux/ethtool.h): the names of the feature bits
// (string set ETH_SS_FEATURES, the same for every device of a kernel: its
// netdev_features_strings) and each device's active bits (GFEATURES).
// The names are read once per Read, into a buffer of their size: the
// library ethtool.Features asks for them again for every NIC into a
// 1 MiB buffer, which a one-shot inspect paid for in page faults (about
// a fifth of its time on this VM).

const (
	ethtoolGSTRINGS  = 0x1b
	ethtoolGSSETINFO = 0x37
	ethtoolGFEATURES = 0x3a
	ethSSFeatures    = 4
	ethGStringLen    = 32
)

// featureReader asks devices for their active features through fd.
type featureReader struct {
	fd    int
	names []string // by bit, once read
}

// ethtoolIfreq is struct ifreq with ifr_data set.
type ethtoolIfreq struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [16]byte
}

// ioctl sends one SIOCETHTOOL request, buf starting with its command.
func (f *featureReader) ioctl(ifname string, buf unsafe.Pointer) error {
	var ifr ethtoolIfreq
	if len(ifname) >= len(ifr.name) {
		return fmt.Errorf("interface name %q is too long", ifname)
	}
	copy(ifr.name[:], ifname)
	ifr.data = buf
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(f.fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(buf)
	if e != 0 {
		return e
	}
	return nil
}

// featureNames reads the names of the feature bits (asked of ifname: a
// device the kernel answers for).
func (f *featureReader) featureNames(ifname string) ([]string, error) {
	if f.names != nil {
		return f.names, nil
	}
	var info struct {
		cmd, reserved uint32
		mask          uint64
		count         uint32
	}
	info.cmd, info.mask = ethtoolGSSETINFO, 1<<ethSSFeatures
	if err := f.ioctl(ifname, unsafe.Pointer(&info)); err != nil {
		return nil, err
	}
	if info.mask&(1<<ethSSFeatures) == 0 || info.count == 0 || info.count > 4096 {
		return nil, fmt.Errorf("%d feature names", info.count)
	}
	buf := make([]byte, 12+int(info.count)*ethGStringLen)
	ne := binary.NativeEndian
	ne.PutUint32(buf[0:], ethtoolGSTRINGS)
	ne.PutUint32(buf[4:], ethSSFeatures)
	ne.PutUint32(buf[8:], info.count)
	if err := f.ioctl(ifname, unsafe.Pointer(&buf[0])); err != nil {
		return nil, err
	}
	n := min(int(ne.Uint32(buf[8:])), int(info.count))
	names := make([]string, n)
	for i := range names {
		s := buf[12+i*ethGStringLen : 12+(i+1)*ethGStringLen]
		for j, c := range s {
			if c == 0 {
				s = s[:j]
				break
			}
		}
		names[i] = string(s)
	}
	f.names = names
	return names, nil
}

// features returns the device's features by name, true when active.
func (f *featureReader) features(ifname string) (map[string]bool, error) {
	names, err := f.featureNames(ifname)
	if err != nil {
		return nil, err
	}
	blocks := (len(names) + 31) / 32
	buf := make([]uint32, 2+4*blocks) // cmd, size, then {available, requested, active, never_changed} per block
	buf[0], buf[1] = ethtoolGFEATURES, uint32(blocks)
	if err := f.ioctl(ifname, unsafe.Pointer(&buf[0])); err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(names))
	for i, name := range names {
		if name != "" {
			out[name] = buf[2+4*(i/32)+2]&(1<<(i%32)) != 0
		}
	}
	return out, nil
}
