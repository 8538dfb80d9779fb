package rules

import (
	"fmt"
	"strings"

	"redline/internal/doctor"
)

// Key balance thresholds: redline's own, as no published one exists. With
// at least keyBalanceMinKeys keys spread by CRC16 over the slots, chance
// alone moves a primary's share by a few percent (a binomial's spread);
// a primary holding over keyBalanceRatio times the keys its slot share
// predicts is skew from the data (hash tags, a few huge slots), not chance.
const (
	keyBalanceMinKeys = 1000
	keyBalanceRatio   = 1.25
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "cluster-key-balance", Section: "cluster", Severity: doctor.Medium,
		Title:  "A primary holds more keys than its share of the slots predicts",
		Why:    "load follows keys: a primary holding far more keys than its slots predict (hash tags pinning keys to one slot, a few huge slots) saturates first, and rebalancing slots by count does not help",
		Source: "RD-cluster (keys map to slots by CRC16, hash tags); redline's threshold: more than 1.25× the slot share, with at least 1000 keys in the cluster",
		Needs:  doctor.NeedCluster,
		Proves: []string{"INFO keyspace on primary *"},
		Check:  checkKeyBalance,
	})
}

func checkKeyBalance(f *doctor.Facts) doctor.Result {
	c := f.Cluster
	slots := slotsOf(c.Shards)
	keys := map[string]int64{}
	var total int64
	var totalSlots int
	var ev []doctor.Evidence
	for _, n := range c.Primaries() {
		if slots[n.Addr] == 0 {
			continue
		}
		if n.Redis == nil {
			return doctor.Unchecked("the keys of primary %s were not read (it could not be reached)", n.Addr)
		}
		for _, db := range n.Redis.Info.Keyspace() {
			keys[n.Addr] += db.Keys
		}
		total += keys[n.Addr]
		totalSlots += slots[n.Addr]
	}
	if total < keyBalanceMinKeys {
		return doctor.Unchecked("the cluster holds %d keys, fewer than %d: too few to tell skew from chance", total, keyBalanceMinKeys)
	}
	var over []string
	for _, n := range c.Primaries() {
		s := slots[n.Addr]
		if s == 0 {
			continue
		}
		keyShare, slotShare := float64(keys[n.Addr])/float64(total), float64(s)/float64(totalSlots)
		ratio := keyShare / slotShare
		e := doctor.Ev("INFO keyspace on primary "+n.Addr, fmt.Sprintf("%d keys", keys[n.Addr]))
		e.Note = fmt.Sprintf("%.1f %% of the keys, %.1f %% of the slots: %.2f× its share", 100*keyShare, 100*slotShare, ratio)
		ev = append(ev, e)
		if ratio > keyBalanceRatio {
			over = append(over, fmt.Sprintf("%s holds %.0f %% of the keys with %.0f %% of the slots (%.2f×)", n.Addr, 100*keyShare, 100*slotShare, ratio))
		}
	}
	if len(over) == 0 {
		return doctor.Pass("%d keys: every primary within %.2f× of its slot share", total, keyBalanceRatio).With(ev...)
	}
	return doctor.Fire("%s", strings.Join(over, "; ")).With(ev...).WithFix(&doctor.Fix{Advice: []string{
		"find the crowded slots (CLUSTER COUNTKEYSINSLOT, redis-cli --cluster check) and the hash tags ({...}) that pin keys to them; spread those keys, or give the crowded slots a primary of their own",
	}})
}
