package target

import (
	"context"
	"encoding/json"
	"testing"

	"redline/internal/change"
	"redline/internal/doctor"
	"redline/internal/serverhost"
	"redline/internal/textsafe"
)

// doctorHost is a server host whose doctor reports what a test says.
type doctorHost struct {
	serverhost.Host
	rep *doctor.Report
}

func (h doctorHost) Doctor(context.Context, serverhost.DoctorArgs) (*doctor.Report, error) {
	return h.rep, nil
}

// Issue 35, item 5: a finding's message quotes the server (a LATENCY
// event's name), and autotune printed and journaled the doctor's lines
// raw: a terminal escape in an event name reached the terminal and the
// journal. Every line doctorFirst makes is escaped.
func TestAutotuneDoctorLinesEscaped(t *testing.T) {
	const evil = "\x1b]0;pwned\a\x1b[2J"
	rep := &doctor.Report{Findings: []doctor.Finding{
		{ID: "latency-events", Status: doctor.Fired, Severity: doctor.Medium, Message: "event " + evil,
			Fix: &doctor.Fix{Changes: []change.Change{{Kind: change.KindRedisConfig, Target: "hz", Value: "100"}}}},
		{ID: "advice", Status: doctor.Fired, Severity: doctor.Medium, Message: "event " + evil,
			Fix: &doctor.Fix{Advice: []string{"look at " + evil}}},
	}}
	key, _ := json.Marshal(serverhost.RedisStartArgs{})
	tg := &Target{host: doctorHost{rep: rep}, servers: map[string]*trialServer{string(key): {}}}
	cands, untested := Candidates(Spec{Knobs: []string{"redis.hz"}})
	_, untested, lines := tg.doctorFirst(context.Background(), cands, untested)
	if len(lines) == 0 || len(untested) == 0 {
		t.Fatalf("lines %q, untested %q: want both", lines, untested)
	}
	for _, l := range append(lines, untested...) {
		if textsafe.Printable(l) != l {
			t.Errorf("raw control characters in %q", l)
		}
	}
}
