package tune

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/safchain/ethtool"

	"redline/internal/change"
	"redline/internal/netns"
)

// NIC channel counts (ethtool -L). Value is "N" for N combined channels,
// or key=value pairs such as "rx=2 tx=2" for drivers with separate queues
// (veth). Changing the count re-creates the NIC's queues: traffic pauses
// for a moment and queue IRQ numbers may change, so plans put it before IRQ
// placement and re-plan afterwards.

func init() {
	registerKind(change.KindChannels, &kindOps{
		check: checkChannels,
		read:  readChannels,
		write: writeChannels,
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

func checkChannels(ctx context.Context, s *System, c change.Change) error {
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
	want, _ := change.ParseChannels(c.Value)
	for k, v := range want {
		if limit := channelField(&max, k); v > *limit {
			return fmt.Errorf("%s: %s=%d is above the driver's maximum %d (see ethtool -l %s)", c.Target, k, v, *limit, c.Target)
		}
	}
	return nil
}

func readChannels(_ context.Context, s *System, c change.Change) (string, error) {
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
func writeChannels(_ context.Context, s *System, c change.Change, v string) error {
	want, err := change.ParseChannels(v)
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

func channelField(c *Channels, key string) *uint32 {
	return map[string]*uint32{"rx": &c.RX, "tx": &c.TX, "other": &c.Other, "combined": &c.Combined}[key]
}

func formatChannels(c Channels) string {
	parts := make([]string, len(change.ChannelKeys))
	for i, k := range change.ChannelKeys {
		parts[i] = k + "=" + strconv.FormatUint(uint64(*channelField(&c, k)), 10)
	}
	return strings.Join(parts, " ")
}
