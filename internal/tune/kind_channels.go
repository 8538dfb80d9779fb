package tune

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/safchain/ethtool"

	"redline/internal/netns"
)

// NIC channel counts (ethtool -L). Value is "N" for N combined channels,
// or key=value pairs such as "rx=2 tx=2" for drivers with separate queues
// (veth). Changing the count re-creates the NIC's queues: traffic pauses
// for a moment and queue IRQ numbers may change, so plans put it before IRQ
// placement and re-plan afterwards.

func init() {
	registerKind(KindChannels, &kindOps{
		validate: validateChannels,
		check:    checkChannels,
		read:     readChannels,
		write:    writeChannels,
		same:     func(_ Change, a, b string) bool { return sameChannels(a, b) },
		lostOn:   "reboot or driver reload",
	})
}

// Channels is a NIC's channel counts.
type Channels struct{ RX, TX, Other, Combined uint32 }

// ChannelLimits is what the driver allows.
type ChannelLimits = Channels

// ChannelController reads and sets NIC channel counts.
type ChannelController interface {
	Get(ifname string) (cur Channels, max ChannelLimits, err error)
	Set(ifname string, ch Channels) error
}

// Ethtool is the ETHTOOL_GCHANNELS/SCHANNELS ioctl, in the network
// namespace named NetNS (as in /run/netns/NAME) or the current one.
type Ethtool struct{ NetNS string }

// Get returns the current and maximum channel counts.
func (e Ethtool) Get(ifname string) (Channels, ChannelLimits, error) {
	var ch ethtool.Channels
	err := e.do(func(t *ethtool.Ethtool) (err error) {
		ch, err = t.GetChannels(ifname)
		return err
	})
	if err != nil {
		return Channels{}, Channels{}, fmt.Errorf("ethtool -l %s: %w", ifname, err)
	}
	return Channels{ch.RxCount, ch.TxCount, ch.OtherCount, ch.CombinedCount},
		Channels{ch.MaxRx, ch.MaxTx, ch.MaxOther, ch.MaxCombined}, nil
}

// Set sets all four counts at once, as the ioctl requires.
func (e Ethtool) Set(ifname string, c Channels) error {
	err := e.do(func(t *ethtool.Ethtool) error {
		_, err := t.SetChannels(ifname, ethtool.Channels{RxCount: c.RX, TxCount: c.TX, OtherCount: c.Other, CombinedCount: c.Combined})
		return err
	})
	if err != nil {
		return fmt.Errorf("ethtool -L %s %s: %w", ifname, formatChannels(c), err)
	}
	return nil
}

// do opens the ethtool socket inside the namespace: a socket belongs to
// the namespace it was created in, so the thread can switch back at once.
func (e Ethtool) do(f func(*ethtool.Ethtool) error) error {
	t, err := e.open()
	if err != nil {
		return err
	}
	defer t.Close()
	return f(t)
}

func (e Ethtool) open() (t *ethtool.Ethtool, err error) {
	err = netns.Do(e.NetNS, func() error {
		t, err = ethtool.NewEthtool()
		return err
	})
	if err != nil && t != nil { // opened, but the thread could not go back
		t.Close()
		t = nil
	}
	return t, err
}

func validateChannels(c Change) error {
	if c.Target == "" || len(c.Target) > 15 || strings.ContainsAny(c.Target, "/ \t") {
		return errors.New("not a network interface name")
	}
	_, err := parseChannels(c.Value)
	return err
}

func checkChannels(ctx context.Context, s *System, c Change) error {
	if s.Channels == nil {
		return refuse("NIC channels can only be changed on the live host", nil)
	}
	if err := s.requireRoot(); err != nil {
		return err
	}
	_, max, err := s.Channels.Get(c.Target)
	if err != nil {
		return classify(c, err)
	}
	want, _ := parseChannels(c.Value)
	for k, v := range want {
		if limit := channelField(&max, k); v > *limit {
			return fmt.Errorf("%s: %s=%d is above the driver's maximum %d (see ethtool -l %s)", c.Target, k, v, *limit, c.Target)
		}
	}
	return nil
}

func readChannels(_ context.Context, s *System, c Change) (string, error) {
	if s.Channels == nil {
		return "", refuse("NIC channels can only be read on the live host", nil)
	}
	cur, _, err := s.Channels.Get(c.Target)
	if err != nil {
		return "", classify(c, err)
	}
	return formatChannels(cur), nil
}

// writeChannels changes the counts named in v and keeps the others.
func writeChannels(_ context.Context, s *System, c Change, v string) error {
	want, err := parseChannels(v)
	if err != nil {
		return err
	}
	cur, _, err := s.Channels.Get(c.Target)
	if err != nil {
		return classify(c, err)
	}
	for k, n := range want {
		*channelField(&cur, k) = n
	}
	return classify(c, s.Channels.Set(c.Target, cur))
}

var channelKeys = []string{"rx", "tx", "other", "combined"}

func channelField(c *Channels, key string) *uint32 {
	return map[string]*uint32{"rx": &c.RX, "tx": &c.TX, "other": &c.Other, "combined": &c.Combined}[key]
}

func formatChannels(c Channels) string {
	parts := make([]string, len(channelKeys))
	for i, k := range channelKeys {
		parts[i] = k + "=" + strconv.FormatUint(uint64(*channelField(&c, k)), 10)
	}
	return strings.Join(parts, " ")
}

// parseChannels reads "N" (combined) or "rx=N tx=M ...".
func parseChannels(v string) (map[string]uint32, error) {
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
		if err != nil || !slices.Contains(channelKeys, k) {
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
	x, errA := parseChannels(a)
	y, errB := parseChannels(b)
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
