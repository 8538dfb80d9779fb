package rules

import (
	"fmt"
	"strings"

	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "cluster-replicas", Section: "cluster", Severity: doctor.Low,
		Title:  "A primary has no working replica while others have one",
		Why:    "a primary without a replica cannot fail over: when it fails its slots go unserved (and with full coverage required the whole cluster stops), while the other shards survive the same failure",
		Source: "RD-cluster (replica promotion; replica migration and cluster-migration-barrier)",
		Needs:  doctor.NeedCluster,
		Proves: []string{"CLUSTER SHARDS on *: working replicas of *"},
		Check:  checkClusterReplicas,
	})
}

func checkClusterReplicas(f *doctor.Facts) doctor.Result {
	c := f.Cluster
	var ev []doctor.Evidence
	var bare []string
	with := 0
	for _, sh := range c.Shards {
		p, ok := sh.Primary()
		if !ok || len(sh.Slots) == 0 {
			continue
		}
		var ok2, other []string
		for _, n := range sh.Nodes {
			switch {
			case n.Role == "master":
			case n.Working():
				ok2 = append(ok2, n.Addr)
			default:
				other = append(other, n.Addr+" "+n.Health)
			}
		}
		e := doctor.Ev("CLUSTER SHARDS on "+c.Seed+": working replicas of "+p.Addr, len(ok2))
		if len(other) > 0 {
			e.Note = "not counted: " + strings.Join(other, ", ")
		}
		ev = append(ev, e)
		if len(ok2) == 0 {
			bare = append(bare, p.Addr)
		} else {
			with++
		}
	}
	switch {
	case len(ev) == 0:
		return doctor.Unchecked("no primary serves slots")
	case with == 0:
		return doctor.Pass("no primary has a replica: every shard is alike (a failure of any primary leaves its slots unserved)").With(ev...)
	case len(bare) == 0:
		return doctor.Pass("every primary serving slots has a working replica").With(ev...)
	}
	return doctor.Fire("%s: no working replica, while %d other primar%s one", strings.Join(bare, ", "), with, plural(with, "y has", "ies have")).With(ev...).
		WithFix(&doctor.Fix{Advice: []string{
			fmt.Sprintf("attach a replica: redis-cli --cluster add-node NEW_NODE %s --cluster-slave --cluster-master-id <id of %s>", c.Seed, bare[0]),
			"or let Redis move a spare replica there (cluster-allow-replica-migration yes, cluster-migration-barrier 1)",
		}})
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
