package rules

import (
	"fmt"
	"slices"
	"strings"

	"redline/internal/doctor"
	"redline/internal/redisadmin"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "cluster-coverage", Section: "cluster", Severity: doctor.High,
		Title:  "Hash slots not served, a node not in cluster_state ok, or a node flagged failing",
		Why:    "a key in a slot no primary serves cannot be read or written; with cluster-require-full-coverage yes (the default) a node that sees such a slot stops serving every query (cluster_state:fail); a node flagged fail? or fail stops answering for its slots until a failover",
		Source: "RS-conf (cluster-require-full-coverage); RD-cluster (cluster_state, PFAIL and FAIL flags)",
		Needs:  doctor.NeedCluster,
		Proves: []string{"CLUSTER SHARDS on *: slots served", "CLUSTER INFO cluster_state on *", "CLUSTER NODES on *"},
		Check:  checkClusterCoverage,
	})
}

func checkClusterCoverage(f *doctor.Facts) doctor.Result {
	c := f.Cluster
	var problems []string
	var ev []doctor.Evidence
	uncovered, failed := slotGaps(c.Shards)
	ev = append(ev, doctor.Ev("CLUSTER SHARDS on "+c.Seed+": slots served", fmt.Sprintf("%d of %d", redisadmin.ClusterSlots-countSlots(uncovered), redisadmin.ClusterSlots)))
	if len(uncovered) > 0 {
		problems = append(problems, fmt.Sprintf("%d slot(s) served by no primary: %s", countSlots(uncovered), rangesText(uncovered)))
		ev[0].Note = "unserved: " + rangesText(uncovered)
	}
	for _, p := range failed {
		problems = append(problems, fmt.Sprintf("primary %s is failed (CLUSTER SHARDS health) and serves %d slot(s): %s", p.addr, countSlots(p.slots), rangesText(p.slots)))
	}
	for _, n := range c.Nodes {
		if n.ClusterInfo == nil {
			continue
		}
		state, _ := n.ClusterInfo.Get("cluster_state")
		ev = append(ev, doctor.Ev("CLUSTER INFO cluster_state on "+n.Addr, state))
		if state != "ok" {
			problems = append(problems, fmt.Sprintf("node %s reports cluster_state:%s", n.Label(), state))
		}
	}
	flagged := flaggedNodes(c)
	if c.FlagsError == "" {
		ev = append(ev, doctor.Ev("CLUSTER NODES on "+c.Seed+": nodes flagged fail? or fail", orNoneStr(strings.Join(flagged, "; "))))
	}
	for _, s := range flagged {
		problems = append(problems, "the seed flags node "+s)
	}
	res := doctor.Pass("every slot served, every node read says cluster_state:ok, no node flagged failing")
	if c.FlagsError != "" && len(problems) == 0 {
		return doctor.Unchecked("every slot served and every node read says cluster_state:ok, but which nodes the seed flags failing is unknown: %s", c.FlagsError)
	}
	if len(problems) > 0 {
		res = doctor.Fire("%s", strings.Join(problems, "; ")).WithFix(&doctor.Fix{Advice: []string{
			"bring failed nodes back, or fail over to a replica (CLUSTER FAILOVER on the replica)",
			"assign unserved slots: redis-cli --cluster fix " + c.Seed,
		}})
	}
	res = res.With(ev...)
	if down := c.Unreachable(); len(down) > 0 {
		res = res.Note("CLUSTER INFO not read from %s (could not be reached)", strings.Join(down, ", "))
	}
	return res
}

type failedPrimary struct {
	addr  string
	slots []redisadmin.SlotRange
}

// slotGaps returns the slots no shard serves and the primaries CLUSTER
// SHARDS reports as failed, with their slots (Failed, not !Working: a
// loading primary serves its slots once loaded).
func slotGaps(shards []redisadmin.ClusterShard) ([]redisadmin.SlotRange, []failedPrimary) {
	var served [redisadmin.ClusterSlots]bool
	var failed []failedPrimary
	for _, sh := range shards {
		p, ok := sh.Primary()
		if !ok {
			continue
		}
		for _, r := range sh.Slots {
			for s := max(r.Start, 0); s <= min(r.End, redisadmin.ClusterSlots-1); s++ {
				served[s] = true
			}
		}
		if p.Failed() && len(sh.Slots) > 0 {
			failed = append(failed, failedPrimary{p.Addr, sh.Slots})
		}
	}
	var gaps []redisadmin.SlotRange
	for s := 0; s < redisadmin.ClusterSlots; s++ {
		if served[s] {
			continue
		}
		if n := len(gaps); n > 0 && gaps[n-1].End == s-1 {
			gaps[n-1].End = s
		} else {
			gaps = append(gaps, redisadmin.SlotRange{Start: s, End: s})
		}
	}
	return gaps, failed
}

// flaggedNodes lists the nodes the seed's CLUSTER NODES flags as fail? or
// fail, by address where the topology knows it.
func flaggedNodes(c *doctor.Cluster) []string {
	var out []string
	for id, flags := range c.Flags {
		var bad []string
		for _, fl := range flags {
			if fl == "fail" || fl == "fail?" {
				bad = append(bad, fl)
			}
		}
		if len(bad) == 0 {
			continue
		}
		who := "id " + id
		for _, n := range c.Nodes {
			if n.ID == id {
				who = n.Label()
			}
		}
		out = append(out, who+" "+strings.Join(bad, ","))
	}
	slices.Sort(out)
	return out
}

func countSlots(rs []redisadmin.SlotRange) int {
	n := 0
	for _, r := range rs {
		n += r.Len()
	}
	return n
}

// rangesText is "0-99, 5000, 6000-6100", at most 8 ranges then "and N more".
func rangesText(rs []redisadmin.SlotRange) string {
	var parts []string
	for i, r := range rs {
		if i == 8 {
			parts = append(parts, fmt.Sprintf("and %d more range(s)", len(rs)-8))
			break
		}
		parts = append(parts, r.String())
	}
	return strings.Join(parts, ", ")
}

func orNoneStr(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
