package rules

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"redline/internal/change"
	"redline/internal/doctor"
	"redline/internal/host"
	"redline/internal/tune"
)

// On every fixture tree, doctor's nic-irq-affinity fix and tune's
// irq-local profile put every queue IRQ on the same CPU: both ask
// placement.IRQs. The fix is built whether or not the rule fires there.
func TestIRQFixMatchesIRQLocalProfile(t *testing.T) {
	trees, _ := filepath.Glob("../../../testdata/hosts/*")
	compared, notes := 0, 0
	for _, dir := range trees {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		fsys, err := host.NewFS(dir)
		if err != nil {
			t.Fatal(err)
		}
		snap, err := host.Read(fsys, host.Options{})
		if err != nil {
			t.Fatal(err)
		}
		// No server chosen (both keep off every server), then each
		// server chosen as --pid would.
		pids := []int{0}
		for _, p := range snap.Processes {
			pids = append(pids, p.PID)
		}
		for _, pid := range pids {
			f := &doctor.Facts{Host: snap, Pid: pid}
			for i := range snap.NICs {
				n := &snap.NICs[i]
				if len(n.QueueIRQs) == 0 {
					continue
				}
				fix := irqPlacementFix(f, n, nil)
				doctorCPUs := irqPins(fix.Changes)
				var tuneCPUs map[string]string
				var tuneNotes []string
				if p, err := tune.PlanProfiles(tune.PlanInput{Host: snap, NIC: n.Name, PID: pid}, "irq-local"); err == nil {
					tuneCPUs, tuneNotes = irqPins(p.Changes), p.Notes
				}
				if d := cmp.Diff(tuneCPUs, doctorCPUs); d != "" {
					t.Errorf("%s %s pid %d: doctor and irq-local disagree (-tune +doctor):\n%s", filepath.Base(dir), n.Name, pid, d)
				}
				compared += len(doctorCPUs)
				// The compromises placement made are said by both.
				if pl, err := placeIRQs(f, n); err == nil && doctorCPUs != nil {
					for _, note := range pl.Notes {
						if !slices.Contains(fix.Advice, note) || !slices.Contains(tuneNotes, note) {
							t.Errorf("%s %s pid %d: placement note %q: in doctor's fix %v, in tune's plan %v", filepath.Base(dir), n.Name, pid, note, slices.Contains(fix.Advice, note), slices.Contains(tuneNotes, note))
						}
						notes++
					}
				}
			}
		}
	}
	if compared == 0 {
		t.Fatal("no fixture tree has queue IRQs to compare")
	}
	if notes == 0 {
		t.Fatal("no fixture tree makes placement note a compromise")
	}
	t.Logf("%d queue IRQs and %d placement notes compared", compared, notes)
}

// irqPins maps each smp_affinity_list target to its CPU.
func irqPins(cs []change.Change) map[string]string {
	var out map[string]string
	for _, c := range cs {
		if c.Kind == change.KindFile && filepath.Base(c.Target) == "smp_affinity_list" {
			if out == nil {
				out = map[string]string{}
			}
			out[c.Target] = c.Value
		}
	}
	return out
}
