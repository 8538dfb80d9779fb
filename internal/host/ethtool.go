package host

import (
	"encoding/json"
)

// Ethtool facts come from the SIOCETHTOOL ioctl on the live machine (what
// `ethtool -i/-l/-g/-c/-k IF` print; kernel.Live.Ethtool). They have no
// file, so a capture writes them to ethtool/IF.json in the fixture tree
// and a fixture tree answers from there:
//
//	{"driver":"virtio_net","bus_info":"0000:00:03.0","channels":{"max_combined":1,"combined":1,...}}
func readEthtool(r *reader) error {
	var live map[string]*Ethtool
	if r.fs.Live() {
		names := make([]string, len(r.snap.NICs))
		for i, n := range r.snap.NICs {
			names[i] = n.Name
		}
		var err error
		if live, err = r.fs.kernel.Ethtool(names); err != nil {
			return err
		}
	}
	for i := range r.snap.NICs {
		n := &r.snap.NICs[i]
		data, err := r.fs.readVirtual(ethtoolPath(n.Name), func() ([]byte, error) {
			return json.Marshal(live[n.Name])
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
		if !e.Empty() {
			n.Ethtool = &e
		}
	}
	return nil
}

func ethtoolPath(ifname string) string { return "/ethtool/" + ifname + ".json" }
