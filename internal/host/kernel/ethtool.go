package kernel

import (
	"fmt"
	"slices"

	"github.com/safchain/ethtool"
	"golang.org/x/sys/unix"
)

// Ethtool facts come from the SIOCETHTOOL ioctl (what `ethtool
// -i/-l/-g/-c/-k IF` print). They have no file: host keeps them in a
// capture as ethtool/IF.json, this type's JSON:
//
//	{"driver":"virtio_net","bus_info":"0000:00:03.0","channels":{"max_combined":1,"combined":1,...}}

// Ethtool is what the ethtool ioctls report for a NIC (host.Ethtool).
type Ethtool struct {
	Driver   string `json:"driver,omitempty"`
	Version  string `json:"version,omitempty"`
	Firmware string `json:"firmware,omitempty"`
	BusInfo  string `json:"bus_info,omitempty"`

	Channels *Channels       `json:"channels,omitempty"`
	Ring     *Ring           `json:"ring,omitempty"`
	Coalesce *Coalesce       `json:"coalesce,omitempty"`
	Features map[string]bool `json:"features,omitempty"`
	// Unsupported lists the queries the driver refused ("channels").
	Unsupported []string `json:"unsupported,omitempty"`
}

// Empty reports whether e holds no answer at all.
func (e *Ethtool) Empty() bool {
	return e.Driver == "" && e.Channels == nil && e.Ring == nil && e.Coalesce == nil && len(e.Features) == 0
}

// Channels is `ethtool -l`.
type Channels struct {
	MaxRx       uint32 `json:"max_rx"`
	MaxTx       uint32 `json:"max_tx"`
	MaxOther    uint32 `json:"max_other"`
	MaxCombined uint32 `json:"max_combined"`
	Rx          uint32 `json:"rx"`
	Tx          uint32 `json:"tx"`
	Other       uint32 `json:"other"`
	Combined    uint32 `json:"combined"`
}

// Ring is `ethtool -g`.
type Ring struct {
	RxMax uint32 `json:"rx_max"`
	TxMax uint32 `json:"tx_max"`
	Rx    uint32 `json:"rx"`
	Tx    uint32 `json:"tx"`
}

// Coalesce is the part of `ethtool -c` the doctor reads.
type Coalesce struct {
	AdaptiveRx bool   `json:"adaptive_rx"`
	AdaptiveTx bool   `json:"adaptive_tx"`
	RxUsecs    uint32 `json:"rx_usecs"`
	RxFrames   uint32 `json:"rx_frames"`
	TxUsecs    uint32 `json:"tx_usecs"`
	TxFrames   uint32 `json:"tx_frames"`
}

// Ethtool asks the driver of each NIC everything Ethtool holds, through
// one ethtool socket and one feature-name read for them all; queries a
// driver refuses are listed in its Unsupported. The error is a socket
// that could not be opened.
func (Live) Ethtool(ifnames []string) (map[string]*Ethtool, error) {
	et, err := ethtool.NewEthtool()
	if err != nil {
		return nil, fmt.Errorf("ethtool: open socket: %w", err)
	}
	defer et.Close()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("ethtool: open socket: %w", err)
	}
	defer unix.Close(fd)
	fr := &featureReader{fd: fd}
	out := make(map[string]*Ethtool, len(ifnames))
	for _, name := range ifnames {
		out[name] = queryEthtool(et, fr, name)
	}
	return out, nil
}

// queryEthtool asks the driver everything Ethtool holds; queries the
// driver refuses are listed in Unsupported.
func queryEthtool(et *ethtool.Ethtool, fr *featureReader, ifname string) *Ethtool {
	e := &Ethtool{}
	unsupported := func(what string, err error) bool {
		if err != nil {
			e.Unsupported = append(e.Unsupported, what)
		}
		return err != nil
	}
	if d, err := et.DriverInfo(ifname); !unsupported("driver", err) {
		e.Driver, e.Version, e.Firmware, e.BusInfo = d.Driver, d.Version, d.FwVersion, d.BusInfo
	}
	if c, err := et.GetChannels(ifname); !unsupported("channels", err) {
		e.Channels = &Channels{MaxRx: c.MaxRx, MaxTx: c.MaxTx, MaxOther: c.MaxOther, MaxCombined: c.MaxCombined,
			Rx: c.RxCount, Tx: c.TxCount, Other: c.OtherCount, Combined: c.CombinedCount}
	}
	if g, err := et.GetRing(ifname); !unsupported("ring", err) {
		e.Ring = &Ring{RxMax: g.RxMaxPending, TxMax: g.TxMaxPending, Rx: g.RxPending, Tx: g.TxPending}
	}
	if c, err := et.GetCoalesce(ifname); !unsupported("coalesce", err) {
		e.Coalesce = &Coalesce{AdaptiveRx: c.UseAdaptiveRxCoalesce != 0, AdaptiveTx: c.UseAdaptiveTxCoalesce != 0,
			RxUsecs: c.RxCoalesceUsecs, RxFrames: c.RxMaxCoalescedFrames, TxUsecs: c.TxCoalesceUsecs, TxFrames: c.TxMaxCoalescedFrames}
	}
	if f, err := fr.features(ifname); !unsupported("features", err) && len(f) > 0 {
		e.Features = f
	}
	slices.Sort(e.Unsupported)
	return e
}
