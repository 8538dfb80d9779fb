package profile

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"redline/internal/profiledata"
)

func TestParseSwitchesCapture(t *testing.T) {
	f, err := os.Open(fixtures + "perf-script-switch.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := ParseSwitches(f, 7311)
	if err != nil {
		t.Fatal(err)
	}
	want := []profiledata.Preemptor{{Comm: "redline", Count: 307}, {Comm: "cli.test", Count: 24}, {Comm: "ksoftirqd/0", Count: 1}}
	if p.Count != 332 || p.Asleep != 68 || !reflect.DeepEqual(p.By, want) {
		t.Errorf("got %+v", p)
	}
}

func TestParseSwitchesTable(t *testing.T) {
	in := strings.Join([]string{
		"1 prev_comm=a b=c prev_pid=1 prev_prio=120 prev_state=R+ ==> next_comm=x y next_pid=9 next_prio=120",
		"1 prev_comm=a prev_pid=1 prev_prio=120 prev_state=D ==> next_comm=swapper/0 next_pid=0 next_prio=120",
		"2 prev_comm=a prev_pid=2 prev_prio=120 prev_state=R ==> next_comm=z next_pid=9 next_prio=120",
		"garbage", "1 prev_comm=a prev_pid=1 prev_state=R", // cut short: not a switch
	}, "\n")
	p, err := ParseSwitches(strings.NewReader(in), 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.Count != 1 || p.Asleep != 1 || len(p.By) != 1 || p.By[0].Comm != "x y" {
		t.Errorf("got %+v", p)
	}
	by := map[string]uint64{"a": 1, "b": 9, "c": 3, "d": 3, "e": 2, "f": 1, "g": 1}
	top := topPreemptors(by)
	if len(top) != 6 || top[0].Comm != "b" || top[1].Comm != "c" || top[5] != (profiledata.Preemptor{Comm: "other", Count: 2}) {
		t.Errorf("top %+v", top)
	}
}
