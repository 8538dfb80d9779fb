package tune

import (
	"fmt"
	"redline/internal/testutil"
	"testing"
	"time"

	"redline/internal/change"
)

// plan200 is a plan of 200 changes on a simulated tree: 100 IRQ affinities
// and 100 RPS masks.
func plan200(b *testing.B) (*System, *Plan) {
	files := map[string]string{}
	p := &Plan{Version: 1}
	for i := 0; i < 100; i++ {
		irq := fmt.Sprintf("/proc/irq/%d/smp_affinity_list", 100+i)
		rps := fmt.Sprintf("/sys/class/net/eth0/queues/rx-%d/rps_cpus", i)
		files[irq[1:]], files[rps[1:]] = "0-63\n", "00000000,00000000\n"
		p.Changes = append(p.Changes,
			change.Change{Kind: change.KindFile, Target: irq, Value: fmt.Sprint(i % 64)},
			change.Change{Kind: change.KindFile, Target: rps, Value: "ff"})
	}
	return RehearsalSystem(testutil.WriteTree(b, files)), p
}

// BenchmarkApplyRollback200 applies a 200-change plan (each write behind an
// fsynced journal entry and read back) and rolls it back, per iteration.
func BenchmarkApplyRollback200(b *testing.B) {
	s, p := plan200(b)
	state := b.TempDir()
	var apply, rollback time.Duration
	for b.Loop() {
		a, r := applyRollback(b, s, p, state)
		apply, rollback = apply+a, rollback+r
	}
	b.ReportMetric(float64(apply.Milliseconds())/float64(b.N), "apply-ms/op")
	b.ReportMetric(float64(rollback.Milliseconds())/float64(b.N), "rollback-ms/op")
}

// BenchmarkApplyRollback200Veth does the same on the real kernel: RPS and
// XPS masks of a 100-queue veth in a network namespace the benchmark
// creates (REDLINE_TEST_HOST_WRITES=1 only).
func BenchmarkApplyRollback200Veth(b *testing.B) {
	requireHostWrites(b)
	ns, ifname := testNetnsQueues(b, 100)
	root := mountNetnsSysfs(b, ns)
	s := &System{Root: root, FS: OSFS{Root: root}, Live: true, euid: 0}
	p := &Plan{Version: 1}
	for i := 0; i < 100; i++ {
		q := fmt.Sprintf("/sys/class/net/%s/queues/", ifname)
		p.Changes = append(p.Changes,
			change.Change{Kind: change.KindFile, Target: fmt.Sprintf("%srx-%d/rps_cpus", q, i), Value: "1"},
			change.Change{Kind: change.KindFile, Target: fmt.Sprintf("%stx-%d/xps_cpus", q, i), Value: "2"})
	}
	state := b.TempDir()
	var apply, rollback time.Duration
	for b.Loop() {
		a, r := applyRollback(b, s, p, state)
		apply, rollback = apply+a, rollback+r
	}
	b.ReportMetric(float64(apply.Milliseconds())/float64(b.N), "apply-ms/op")
	b.ReportMetric(float64(rollback.Milliseconds())/float64(b.N), "rollback-ms/op")
}

func applyRollback(b *testing.B, s *System, p *Plan, state string) (apply, rollback time.Duration) {
	t0 := time.Now()
	res, err := Apply(bg, s, p, ApplyOptions{StateDir: state})
	if err != nil || res.Count(StatusApplied) != len(p.Changes) {
		b.Fatalf("apply: %v (%d applied)", err, res.Count(StatusApplied))
	}
	t1 := time.Now()
	rb, err := Rollback(bg, RollbackOptions{StateDir: state, System: s})
	if err != nil || rb.Count(StatusRestored) != len(p.Changes) {
		b.Fatalf("rollback: %v", err)
	}
	return t1.Sub(t0), time.Since(t1)
}
