package redisadmin

// Typed views of INFO's composite lines:
//
//	db0:keys=1,expires=0,avg_ttl=0
//	cmdstat_set:calls=1,usec=47,usec_per_call=47.00,rejected_calls=0,failed_calls=0
//	errorstat_ERR:count=3
//	latency_percentiles_usec_set:p50=47.103,p99=47.103,p99.9=47.103
//	slave0:ip=127.0.0.1,port=6380,state=online,offset=42,lag=0
//	module:name=search,ver=20809,api=1,filters=0,usedby=[],using=[],options=[]

import (
	"sort"
	"strconv"
	"strings"
)

// DB is one keyspace line.
type DB struct {
	DB      int   `json:"db"`
	Keys    int64 `json:"keys"`
	Expires int64 `json:"expires"`
	AvgTTL  int64 `json:"avg_ttl_ms"`
}

// Keyspace returns the keyspace lines in db order.
func (i *Info) Keyspace() []DB {
	s, _ := i.Section("Keyspace")
	var out []DB
	for _, f := range s.Fields {
		n, err := strconv.Atoi(strings.TrimPrefix(f.Key, "db"))
		if !strings.HasPrefix(f.Key, "db") || err != nil {
			continue
		}
		kv := ParseKV(f.Value)
		d := DB{DB: n}
		d.Keys, _ = kvInt(kv, "keys")
		d.Expires, _ = kvInt(kv, "expires")
		d.AvgTTL, _ = kvInt(kv, "avg_ttl")
		out = append(out, d)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].DB < out[b].DB })
	return out
}

// CommandStat is one cmdstat_ line. Command is lower-case, with "|" between
// a container command and its subcommand ("config|get").
type CommandStat struct {
	Command       string  `json:"command"`
	Calls         int64   `json:"calls"`
	Usec          int64   `json:"usec"`
	UsecPerCall   float64 `json:"usec_per_call"`
	RejectedCalls int64   `json:"rejected_calls"`
	FailedCalls   int64   `json:"failed_calls"`
}

// Commandstats returns the Commandstats section, busiest (by total usec) first.
func (i *Info) Commandstats() []CommandStat {
	var out []CommandStat
	for _, f := range i.prefixed("cmdstat_") {
		kv := ParseKV(f.Value)
		c := CommandStat{Command: f.Key}
		c.Calls, _ = kvInt(kv, "calls")
		c.Usec, _ = kvInt(kv, "usec")
		c.UsecPerCall, _ = kvFloat(kv, "usec_per_call")
		c.RejectedCalls, _ = kvInt(kv, "rejected_calls")
		c.FailedCalls, _ = kvInt(kv, "failed_calls")
		out = append(out, c)
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Usec > out[b].Usec })
	return out
}

// Errorstats returns errorstat_ counts by error prefix ("ERR", "WRONGTYPE").
func (i *Info) Errorstats() map[string]int64 {
	out := map[string]int64{}
	for _, f := range i.prefixed("errorstat_") {
		out[f.Key], _ = kvInt(ParseKV(f.Value), "count")
	}
	return out
}

// Percentiles is one latency_percentiles_usec_ line: percentile label
// ("p99.9") to microseconds.
type Percentiles struct {
	Command string             `json:"command"`
	Usec    map[string]float64 `json:"usec"`
}

// Latencystats returns the per-command latency percentiles (Redis 7+).
func (i *Info) Latencystats() []Percentiles {
	var out []Percentiles
	for _, f := range i.prefixed("latency_percentiles_usec_") {
		p := Percentiles{Command: f.Key, Usec: map[string]float64{}}
		for _, kv := range ParseKV(f.Value) {
			if v, err := strconv.ParseFloat(kv.Value, 64); err == nil {
				p.Usec[kv.Key] = v
			}
		}
		out = append(out, p)
	}
	return out
}

// Replica is one slaveN line of a primary's Replication section.
type Replica struct {
	IP     string `json:"ip"`
	Port   int64  `json:"port"`
	State  string `json:"state"`
	Offset int64  `json:"offset"`
	Lag    int64  `json:"lag"`
}

// Replicas returns the replicas a primary reports.
func (i *Info) Replicas() []Replica {
	s, _ := i.Section("Replication")
	var out []Replica
	for _, f := range s.Fields {
		rest, ok := strings.CutPrefix(f.Key, "slave")
		if _, err := strconv.Atoi(rest); !ok || err != nil {
			continue
		}
		kv := ParseKV(f.Value)
		r := Replica{IP: kvString(kv, "ip"), State: kvString(kv, "state")}
		r.Port, _ = kvInt(kv, "port")
		r.Offset, _ = kvInt(kv, "offset")
		r.Lag, _ = kvInt(kv, "lag")
		out = append(out, r)
	}
	return out
}

// Module is one loaded module.
type Module struct {
	Name    string `json:"name"`
	Version string `json:"ver"`
}

// Modules returns the loaded modules.
func (i *Info) Modules() []Module {
	s, _ := i.Section("Modules")
	var out []Module
	for _, f := range s.Fields {
		if f.Key != "module" {
			continue
		}
		kv := ParseKV(f.Value)
		out = append(out, Module{Name: kvString(kv, "name"), Version: kvString(kv, "ver")})
	}
	return out
}

// prefixed returns the fields whose key starts with prefix, with the prefix
// removed from the key.
func (i *Info) prefixed(prefix string) []Field {
	var out []Field
	for _, s := range i.Sections {
		for _, f := range s.Fields {
			if rest, ok := strings.CutPrefix(f.Key, prefix); ok {
				out = append(out, Field{Key: rest, Value: f.Value})
			}
		}
	}
	return out
}
