package rules

import (
	"fmt"
	"math"
	"strings"

	"redline/internal/doctor"
	"redline/internal/redisadmin"
)

// slotBalanceThreshold is redis-cli's: --cluster rebalance moves slots
// only when a primary's share is off by more than this many percent
// (CLUSTER_MANAGER_REBALANCE_THRESHOLD, src/redis-cli.c).
const slotBalanceThreshold = 2.0

func init() {
	doctor.Register(doctor.Rule{
		ID: "cluster-slot-balance", Section: "cluster", Severity: doctor.Medium,
		Title:  "Primaries serve uneven numbers of hash slots",
		Why:    "keys spread over slots, so a primary with more slots holds more keys and takes more requests: it saturates first while the others idle",
		Source: "RS redis-cli.c (--cluster rebalance: a primary off its even share by more than CLUSTER_MANAGER_REBALANCE_THRESHOLD = 2 %)",
		Needs:  doctor.NeedCluster,
		Proves: []string{"CLUSTER SHARDS on *: slots of primary *"},
		Check:  checkSlotBalance,
	})
}

type primarySlots struct {
	addr  string
	slots int
}

func checkSlotBalance(f *doctor.Facts) doctor.Result {
	c := f.Cluster
	var ps []primarySlots
	var empty []string
	total := 0
	for _, sh := range c.Shards {
		p, ok := sh.Primary()
		if !ok {
			continue
		}
		if n := sh.SlotCount(); n > 0 {
			ps = append(ps, primarySlots{p.Addr, n})
			total += n
		} else {
			empty = append(empty, p.Addr)
		}
	}
	if len(ps) < 2 {
		return doctor.Skip("%d primary serves slots: nothing to balance", len(ps))
	}
	// redis-cli's even share: (int)(16384 / total_weight), the weight
	// being one per primary serving slots (clusterManagerCommandRebalance).
	expected := redisadmin.ClusterSlots / len(ps)
	var ev []doctor.Evidence
	var off []string
	worst := 0.0
	for _, p := range ps {
		// redis-cli's measure: |100 - 100*expected/slots|.
		errPct := math.Abs(100 - 100*float64(expected)/float64(p.slots))
		worst = max(worst, errPct)
		e := doctor.Ev("CLUSTER SHARDS on "+c.Seed+": slots of primary "+p.addr, p.slots)
		e.Note = fmt.Sprintf("%.1f %% off the even share of %d", errPct, expected)
		ev = append(ev, e)
		if errPct > slotBalanceThreshold {
			off = append(off, fmt.Sprintf("%s serves %d (%.1f %% off)", p.addr, p.slots, errPct))
		}
	}
	res := doctor.Pass("%d primaries serve %d slots, each within %.0f %% of the even share %d (worst %.1f %%)", len(ps), total, slotBalanceThreshold, expected, worst)
	if len(off) > 0 {
		res = doctor.Fire("%d primaries serve %d slots, even share %d: %s", len(ps), total, expected, strings.Join(off, "; ")).
			WithFix(&doctor.Fix{Advice: []string{"move slots (and their keys) to even the shares: redis-cli --cluster rebalance " + c.Seed + " (it migrates keys: do it off-peak)"}})
	}
	if len(empty) > 0 {
		res = res.Note("primaries serving no slot, left out as redis-cli rebalance leaves them out without --cluster-use-empty-masters: %s", strings.Join(empty, ", "))
	}
	return res.With(ev...)
}

// slotsOf returns how many slots each primary (by address) serves.
func slotsOf(shards []redisadmin.ClusterShard) map[string]int {
	out := map[string]int{}
	for _, sh := range shards {
		if p, ok := sh.Primary(); ok {
			out[p.Addr] = sh.SlotCount()
		}
	}
	return out
}
