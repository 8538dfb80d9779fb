package rules

import (
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "output-buffer-disconnects", Section: "client", Severity: doctor.Low,
		Title:  "Clients were closed for exceeding output-buffer limits",
		Why:    "a client that reads its replies too slowly (or a replica, or a pub/sub subscriber) is disconnected when its output buffer passes client-output-buffer-limit",
		Source: "RD-cli (output buffer limits); RS INFO client_output_buffer_limit_disconnections (7.4+)",
		Needs:  doctor.NeedRedis,
		Proves: []string{"INFO client_output_buffer_limit_disconnections"},
		Check:  checkCOB,
	})
}

func checkCOB(f *doctor.Facts) doctor.Result {
	d, sampled, ev, ok := f.InfoDelta("client_output_buffer_limit_disconnections")
	if !ok {
		return doctor.Skip("this server does not count output-buffer disconnections (before 7.4)")
	}
	limits, lev, _ := f.Config("client-output-buffer-limit")
	if d == 0 {
		return doctor.Pass("no output-buffer disconnections").With(ev)
	}
	return doctor.Fire("%d client(s) disconnected for output-buffer limits %s", d, window(sampled, "since the server started")).With(ev, lev).
		WithFix(&doctor.Fix{Advice: []string{
			"find the slow consumer (CLIENT LIST: large omem, qbuf) and fix it: subscribers that read slowly, MONITOR, huge replies",
			"raise client-output-buffer-limit only for the class that needs it (current: " + limits + ")",
		}})
}
