package rules

import (
	"strings"

	"redline/internal/change"
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "expire-cycle-hz", Section: "redis", Severity: doctor.Low,
		Title:  "Slow expire cycles with a low hz",
		Why:    "the active expire cycle runs hz times a second; with few long cycles each one blocks longer. LATENCY DOCTOR advises hz 100",
		Source: "RS latency.c (expire-cycle advice)",
		Needs:  doctor.NeedRedis,
		Proves: []string{"CONFIG GET hz"},
		Check:  checkExpireHz,
	})
}

func checkExpireHz(f *doctor.Facts) doctor.Result {
	hz, hev, ok := f.ConfigInt("hz")
	if !ok {
		return doctor.Unchecked("CONFIG GET hz failed")
	}
	for _, e := range f.Redis.Latency {
		if strings.HasPrefix(e.Event, "expire-cycle") && hz < 100 {
			return doctor.Fire("expire-cycle events up to %s with hz %d", e.Max, hz).
				With(hev, doctor.Ev("LATENCY LATEST "+e.Event, e.Max)).
				WithFix(new(doctor.Fix).Set(change.KindRedisConfig, "hz", "100", hev.Value, "shorter, more frequent expire cycles"))
		}
	}
	return doctor.Pass("no expire-cycle latency events (hz %d)", hz).With(hev)
}
