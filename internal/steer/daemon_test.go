package steer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"redline/internal/host"
	"redline/internal/tune"
)

// recorded is a Source that replays periods in which every queue's
// packets are consumed on one CPU.
type recorded struct {
	queues   []QueueKey
	consumer int
	periods  int
}

func (r *recorded) Run(ctx context.Context, _ time.Duration, out chan<- *Period) error {
	for i := 0; i < r.periods; i++ {
		p := &Period{Queues: map[QueueKey]*QueueCounts{}}
		for _, k := range r.queues {
			p.Queues[k] = &QueueCounts{Received: 3000, Matched: 1000, Consumers: map[int]uint64{r.consumer: 1000}}
		}
		select {
		case out <- p:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	<-ctx.Done()
	return ctx.Err()
}

func (r *recorded) Stats() SamplerStats                          { return SamplerStats{} }
func (r *recorded) Configure(map[uint32]bool, func(string) bool) {}

// irqRehearsal writes the snapshot's queue IRQ affinities (and effective
// affinities) into a rehearsal tree.
func irqRehearsal(t *testing.T, irqs []QueueIRQ) string {
	root := t.TempDir()
	for _, q := range irqs {
		dir := filepath.Join(root, "proc", "irq", strconv.Itoa(q.IRQ))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "smp_affinity_list"), []byte(q.Affinity.List()+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// The daemon loop on the Kunpeng model, every queue's packets consumed on
// the last node, moving through tune on a rehearsal tree: all moves happen
// in period 2 (within 3), periods 3-5 move nothing, and the restore puts
// every affinity back.
func TestRunConvergesAndRestores(t *testing.T) {
	snap := readHost(t, "kunpeng920-4node-hinic")
	irqs := QueueIRQsOf(snap)
	topo := nodeTopology(t, snap)
	root := irqRehearsal(t, irqs)
	src := &recorded{consumer: topo.CPUs[len(topo.CPUs)-1].ID, periods: 5}
	for _, q := range irqs {
		src.queues = append(src.queues, q.Queue)
	}
	act := &TuneActuator{System: tune.RehearsalSystem(root), StateDir: t.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var moved []int
	cfg := Config{
		Period:   time.Millisecond,
		Read:     func() (*host.Snapshot, error) { return snap, nil },
		ReadFile: func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(root, p)) },
		Actuator: act,
		OnPeriod: func(r *Report) {
			moved = append(moved, len(r.Applied))
			if len(r.NotDone) > 0 {
				t.Errorf("period %d: %v", len(moved), r.NotDone)
			}
			if len(moved) == src.periods {
				cancel()
			}
		},
	}
	if err := Run(ctx, src, cfg); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	if moved[0] != 0 || moved[1] == 0 || moved[2]+moved[3]+moved[4] != 0 {
		t.Fatalf("moves per period %v: want none, then all, then none", moved)
	}
	t.Logf("moves per period: %v", moved)
	if _, err := act.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, q := range irqs {
		b, _ := os.ReadFile(filepath.Join(root, "proc", "irq", strconv.Itoa(q.IRQ), "smp_affinity_list"))
		if got := string(b); got != q.Affinity.List()+"\n" {
			t.Errorf("irq %d reads %q after restore, want %s", q.IRQ, got, q.Affinity.List())
		}
	}
}
