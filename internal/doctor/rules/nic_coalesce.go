package rules

import (
	"fmt"

	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "nic-coalesce", Section: "network", Severity: doctor.Low,
		Title:  "Adaptive RX interrupt coalescing is off",
		Why:    "small request/reply packets are latency-bound; adaptive coalescing lowers interrupt delay at low rates and batches at high rates",
		Source: "KP 2.6 (adaptive-rx on for small packets)",
		Reads:  []string{"nics", "ethtool"},
		Needs:  doctor.NeedHost,
		Proves: []string{"ethtool -c * adaptive-rx"},
		Check:  checkCoalesce,
	})
}

func checkCoalesce(f *doctor.Facts) doctor.Result {
	seen := 0
	var evs []doctor.Evidence
	for _, n := range f.TargetNICs() {
		if n.Ethtool == nil || n.Ethtool.Coalesce == nil {
			continue
		}
		seen++
		c := n.Ethtool.Coalesce
		evs = append(evs, doctor.Ev("ethtool -c "+n.Name+" adaptive-rx", onOff(c.AdaptiveRx)))
		if !c.AdaptiveRx {
			return doctor.Fire("%s has adaptive-rx off (rx-usecs %d, rx-frames %d)", n.Name, c.RxUsecs, c.RxFrames).
				With(doctor.Ev("ethtool -c "+n.Name+" adaptive-rx", "off")).
				WithFix(&doctor.Fix{NeedsRoot: true, Advice: []string{
					fmt.Sprintf("ethtool -C %s adaptive-rx on (undo: ethtool -C %s adaptive-rx off); measure: some drivers' adaptive modes favour throughput", n.Name, n.Name),
				}})
		}
	}
	if seen == 0 {
		return doctor.Skip("no NIC reports interrupt coalescing (ethtool -c unsupported, or not captured)")
	}
	return doctor.Pass("adaptive-rx is on").With(evs...)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
