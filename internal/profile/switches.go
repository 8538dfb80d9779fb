package profile

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"redline/internal/profiledata"
)

// Preemptions is saved in lab results: profiledata.Preemptions.
type Preemptions = profiledata.Preemptions

// preemptorsKept is how many tasks a Preemptions names; the rest are
// summed as "other".
const preemptorsKept = 5

// Preemptions reads a StartSwitches recording: who took thread tid's CPU
// while it was runnable. The perf.data is removed afterwards.
func (d *PerfData) Preemptions(ctx context.Context, tid int) (*Preemptions, error) {
	defer d.cleanup()
	out, err := runStep(ctx, StepSlack, []string{d.perf, "script", "-F", "tid,trace", "-i", d.Path})
	if err != nil {
		return nil, fmt.Errorf("perf script: %w", err)
	}
	return ParseSwitches(bytes.NewReader(out), tid)
}

// ParseSwitches counts thread tid's switches out in perf script -F
// tid,trace output of sched:sched_switch:
//
//	7311 prev_comm=redis-server prev_pid=7311 prev_prio=120 prev_state=R+ ==> next_comm=redline next_pid=7337 next_prio=120
//
// prev_state R (R+ when preempted) means the thread could still run: the
// CPU went to next_comm. Other states are sleeps. Lines of other events
// or threads are skipped.
func ParseSwitches(r io.Reader, tid int) (*Preemptions, error) {
	p := &Preemptions{TID: tid}
	by := map[string]uint64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	want := "prev_pid=" + strconv.Itoa(tid)
	for sc.Scan() {
		f := switchFields(sc.Text())
		if f == nil || "prev_pid="+f["prev_pid"] != want {
			continue
		}
		if strings.HasPrefix(f["prev_state"], "R") {
			p.Count++
			by[f["next_comm"]]++
		} else {
			p.Asleep++
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	p.By = topPreemptors(by)
	return p, nil
}

// switchFields splits a sched_switch line into its fields; nil when the
// line is not one. The fields come in the tracepoint's fixed order, so a
// comm holding spaces or '=' is cut at the next field's name.
func switchFields(line string) map[string]string {
	f := map[string]string{}
	rest := line
	for i, m := range switchMarkers {
		j := strings.Index(rest, m)
		if j < 0 {
			return nil
		}
		if i > 0 {
			f[switchKeys[i-1]] = rest[:j]
		}
		rest = rest[j+len(m):]
	}
	f[switchKeys[len(switchKeys)-1]] = strings.TrimSpace(rest)
	return f
}

// The sched_switch format's markers and the fields they start.
var (
	switchMarkers = []string{"prev_comm=", " prev_pid=", " prev_prio=", " prev_state=", " ==> next_comm=", " next_pid=", " next_prio="}
	switchKeys    = []string{"prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid", "next_prio"}
)

func topPreemptors(by map[string]uint64) []profiledata.Preemptor {
	out := make([]profiledata.Preemptor, 0, len(by))
	for c, n := range by {
		out = append(out, profiledata.Preemptor{Comm: c, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Comm < out[j].Comm
	})
	if len(out) > preemptorsKept {
		var rest uint64
		for _, p := range out[preemptorsKept:] {
			rest += p.Count
		}
		out = append(out[:preemptorsKept], profiledata.Preemptor{Comm: "other", Count: rest})
	}
	return out
}
