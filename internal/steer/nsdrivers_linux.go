package steer

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"

	"redline/internal/netns"
)

// NamespaceDrivers maps the network devices of namespace ns to their
// drivers, asked of the kernel (ethtool's driver query) from inside it:
// the host snapshot reads /sys/class/net of its own namespace, and the
// tracepoints report devices of every namespace by name, so a queue of a
// device in another namespace (the lab's veth) is numbered right only
// when its driver is known (DriverQueues).
func NamespaceDrivers(ns string) (map[string]string, error) {
	m := map[string]string{}
	err := netns.Do(ns, func() error {
		ifs, err := net.Interfaces()
		if err != nil {
			return err
		}
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		for _, i := range ifs {
			if info, err := unix.IoctlGetEthtoolDrvinfo(fd, i.Name); err == nil {
				m[i.Name] = unix.ByteSliceToString(info.Driver[:])
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("drivers of the devices in network namespace %s: %w", ns, err)
	}
	return m, nil
}
