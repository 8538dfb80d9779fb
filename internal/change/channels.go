package change

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// NIC channel counts (ethtool -L). Value is "N" for N combined channels,
// or key=value pairs such as "rx=2 tx=2" for drivers with separate queues
// (veth).

// ChannelKeys are the channel counts a value may name, in ethtool's order.
var ChannelKeys = []string{"rx", "tx", "other", "combined"}

func validateChannels(c Change) error {
	if c.Target == "" || len(c.Target) > 15 || strings.ContainsAny(c.Target, "/ \t") {
		return errors.New("not a network interface name")
	}
	_, err := ParseChannels(c.Value)
	return err
}

// ParseChannels reads "N" (combined) or "rx=N tx=M ...".
func ParseChannels(v string) (map[string]uint32, error) {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		if n == 0 {
			return nil, errors.New("a NIC needs at least one combined channel")
		}
		return map[string]uint32{"combined": uint32(n)}, nil
	}
	out := map[string]uint32{}
	for _, f := range strings.Fields(v) {
		k, num, _ := strings.Cut(f, "=")
		n, err := strconv.ParseUint(num, 10, 32)
		if err != nil || !slices.Contains(ChannelKeys, k) {
			return nil, fmt.Errorf("channel value %q: want N (combined) or rx=N tx=N other=N combined=N", v)
		}
		out[k] = uint32(n)
	}
	if len(out) == 0 {
		return nil, errors.New("empty channel value")
	}
	return out, nil
}

// sameChannels compares the counts both values name.
func sameChannels(a, b string) bool {
	x, errA := ParseChannels(a)
	y, errB := ParseChannels(b)
	if errA != nil || errB != nil {
		return a == b
	}
	for k, v := range x {
		if w, ok := y[k]; ok && w != v {
			return false
		}
	}
	return true
}
