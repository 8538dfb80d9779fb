package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/host"
	"redline/internal/testutil"
	"redline/internal/tune"
)

// Doctor's xps fix and tune's rps-xps plan write the same XPS maps: both
// call placement.XPS. On two trees from real captures (one node each, so
// every CPU is local) whose captures do not show xps_cpus: the test adds
// the file the kernel creates for every TX queue, empty (0) as a driver
// that sets no XPS leaves it; nothing else is modelled.
func TestDoctorAndTuneWriteTheSameXPS(t *testing.T) {
	for _, tc := range []struct{ tree, nic string }{
		{"netutils-mlx5-q6700", "enp1s0f0"},
		{"netutils-i40e-e1000e-e3", "eth0"},
	} {
		t.Run(tc.tree, func(t *testing.T) {
			root := testutil.CopyTree(t, "../../testdata/hosts/"+tc.tree)
			queues, _ := filepath.Glob(filepath.Join(root, "sys/class/net", tc.nic, "queues/tx-*"))
			if len(queues) < 2 {
				t.Fatalf("%s has %d TX queues", tc.nic, len(queues))
			}
			for _, q := range queues {
				if err := os.WriteFile(filepath.Join(q, "xps_cpus"), []byte("0\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, out, errOut := doctorCLI(t, "doctor", "--root", root, "--no-redis", "--json", "--rule", "xps", "--nic", tc.nic)
			if code == ExitError {
				t.Fatalf("doctor: %s", errOut)
			}
			var rep struct {
				Findings []struct {
					Status string
					Fix    struct {
						Changes []struct{ Target, Value string }
					}
				}
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Findings) != 1 || rep.Findings[0].Status != "fired" {
				t.Fatalf("%v: %s", err, out)
			}
			fromDoctor := map[string]string{}
			for _, c := range rep.Findings[0].Fix.Changes {
				fromDoctor[c.Target] = c.Value
			}
			fs, err := host.NewFS(root)
			if err != nil {
				t.Fatal(err)
			}
			snap, err := host.Read(fs, host.Options{})
			if err != nil {
				t.Fatal(err)
			}
			plan, err := tune.PlanProfiles(tune.PlanInput{Host: snap, NIC: tc.nic}, "rps-xps")
			if err != nil {
				t.Fatal(err)
			}
			fromTune := map[string]string{}
			for _, c := range plan.Changes {
				if strings.HasSuffix(c.Target, "/xps_cpus") {
					fromTune[c.Target] = c.Value
				}
			}
			if len(fromDoctor) != len(queues) || len(fromTune) != len(fromDoctor) {
				t.Fatalf("doctor %v, tune %v: want %d queues each", fromDoctor, fromTune, len(queues))
			}
			for target, v := range fromDoctor {
				if fromTune[target] != v {
					t.Errorf("%s: doctor writes %s, tune %s", target, v, fromTune[target])
				}
			}
		})
	}
}
