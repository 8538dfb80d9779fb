package host

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/safchain/ethtool"
	"golang.org/x/sys/unix"
)

// Ethtool facts come from the SIOCETHTOOL ioctl on the live machine (what
// `ethtool -i/-l/-g/-c/-k IF` print). They have no file, so a capture
// writes them to ethtool/IF.json in the fixture tree and a fixture tree
// answers from there:
//
//	{"driver":"virtio_net","bus_info":"0000:00:03.0","channels":{"max_combined":1,"combined":1,...}}
func readEthtool(r *reader) error {
	var et *ethtool.Ethtool
	var fr *featureReader
	if r.fs.Live() {
		var err error
		if et, err = ethtool.NewEthtool(); err != nil {
			return fmt.Errorf("ethtool: open socket: %w", err)
		}
		defer et.Close()
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("ethtool: open socket: %w", err)
		}
		defer unix.Close(fd)
		fr = &featureReader{fd: fd}
	}
	for i := range r.snap.NICs {
		n := &r.snap.NICs[i]
		data, err := r.fs.readVirtual(ethtoolPath(n.Name), func() ([]byte, error) {
			return json.Marshal(queryEthtool(et, fr, n.Name))
		})
		if err != nil {
			if !isAbsent(err) {
				r.failAs("ethtool "+n.Name, err)
			}
			continue
		}
		var e Ethtool
		if err := json.Unmarshal(data, &e); err != nil {
			r.failAs("ethtool "+n.Name, &ParseError{Path: ethtoolPath(n.Name), Err: err})
			continue
		}
		if !e.empty() {
			n.Ethtool = &e
		}
	}
	return nil
}

func ethtoolPath(ifname string) string { return "/ethtool/" + ifname + ".json" }

func (e *Ethtool) empty() bool {
	return e.Driver == "" && e.Channels == nil && e.Ring == nil && e.Coalesce == nil && len(e.Features) == 0
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
