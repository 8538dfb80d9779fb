package redisadmin

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readInfoFixture(t *testing.T) *Info {
	t.Helper()
	b, err := os.ReadFile("testdata/info-7.0.15.txt")
	if err != nil {
		t.Fatal(err)
	}
	return ParseInfo(string(b))
}

func TestParseInfoFixture(t *testing.T) {
	info := readInfoFixture(t)
	if got := info.Version(); got != "7.0.15" {
		t.Errorf("Version = %q, want 7.0.15", got)
	}
	if pid, ok := info.ProcessID(); !ok || pid != 9726 {
		t.Errorf("ProcessID = %d, %v; want 9726, true", pid, ok)
	}
	if n, ok := info.Int("maxclients"); !ok || n != 10000 {
		t.Errorf("maxclients = %d, %v", n, ok)
	}
	if f, ok := info.Float("mem_fragmentation_ratio"); !ok || f != 7.5 {
		t.Errorf("mem_fragmentation_ratio = %v, %v", f, ok)
	}
	if _, ok := info.Int("no_such_field"); ok {
		t.Error("absent field reported present")
	}
	if _, ok := info.Int("os"); ok {
		t.Error("non-numeric field parsed as an integer")
	}
	var names []string
	for _, s := range info.Sections {
		names = append(names, s.Name)
	}
	want := []string{"Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU", "Modules", "Commandstats", "Errorstats", "Latencystats", "Cluster", "Keyspace"}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("sections (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]DB{{DB: 0, Keys: 1}}, info.Keyspace()); d != "" {
		t.Errorf("Keyspace (-want +got):\n%s", d)
	}
	wantCmd := []CommandStat{
		{Command: "config|get", Calls: 3, Usec: 272, UsecPerCall: 90.67},
		{Command: "info", Calls: 1, Usec: 147, UsecPerCall: 147},
		{Command: "set", Calls: 1, Usec: 47, UsecPerCall: 47},
		{Command: "latency|latest", Calls: 1, Usec: 2, UsecPerCall: 2},
	}
	if d := cmp.Diff(wantCmd, info.Commandstats()); d != "" {
		t.Errorf("Commandstats (-want +got):\n%s", d)
	}
	wantLat := Percentiles{Command: "config|get", Usec: map[string]float64{"p50": 8.031, "p99": 260.095, "p99.9": 260.095}}
	if lat := info.Latencystats(); len(lat) != 4 {
		t.Errorf("Latencystats has %d lines, want 4", len(lat))
	} else if d := cmp.Diff(wantLat, lat[3]); d != "" {
		t.Errorf("Latencystats (-want +got):\n%s", d)
	}
	if len(info.Malformed) != 0 {
		t.Errorf("Malformed = %q", info.Malformed)
	}
}

func TestParseInfoLines(t *testing.T) {
	text := "# Replication\r\nrole:master\r\nconnected_slaves:2\r\n" +
		"slave0:ip=10.0.0.2,port=6380,state=online,offset=42,lag=0\r\n" +
		"slave1:ip=10.0.0.3,port=6380,state=wait_bgsave,offset=0,lag=1\r\n" +
		"slave_read_only:1\r\n\r\n" +
		"# Modules\r\nmodule:name=search,ver=20809,api=1,filters=0,usedby=[],using=[ReJSON,timeseries],options=[handle-io-errors]\r\n\r\n" +
		"# Errorstats\r\nerrorstat_ERR:count=3\r\nerrorstat_WRONGTYPE:count=1\r\n" +
		"# Commandstats\r\ncmdstat_config|get:calls=3,usec=30,usec_per_call=10.00,rejected_calls=1,failed_calls=0\r\n" +
		"cmdstat_get:calls=10,usec=100,usec_per_call=10.00,rejected_calls=0,failed_calls=2\r\n" +
		"# Keyspace\r\ndb3:keys=5,expires=1,avg_ttl=100\r\ndb0:keys=7,expires=0,avg_ttl=0\r\n" +
		"this line is malformed\r\n"
	info := ParseInfo(text)
	wantRep := []Replica{
		{IP: "10.0.0.2", Port: 6380, State: "online", Offset: 42},
		{IP: "10.0.0.3", Port: 6380, State: "wait_bgsave", Lag: 1},
	}
	if d := cmp.Diff(wantRep, info.Replicas()); d != "" {
		t.Errorf("Replicas (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]Module{{Name: "search", Version: "20809"}}, info.Modules()); d != "" {
		t.Errorf("Modules (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]int64{"ERR": 3, "WRONGTYPE": 1}, info.Errorstats()); d != "" {
		t.Errorf("Errorstats (-want +got):\n%s", d)
	}
	cs := info.Commandstats()
	if len(cs) != 2 || cs[0].Command != "get" || cs[1].Command != "config|get" || cs[1].RejectedCalls != 1 {
		t.Errorf("Commandstats = %+v, want get (busiest) then config|get", cs)
	}
	if d := cmp.Diff([]DB{{DB: 0, Keys: 7}, {DB: 3, Keys: 5, Expires: 1, AvgTTL: 100}}, info.Keyspace()); d != "" {
		t.Errorf("Keyspace (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"this line is malformed"}, info.Malformed); d != "" {
		t.Errorf("Malformed (-want +got):\n%s", d)
	}
}

func TestParseKV(t *testing.T) {
	tests := []struct {
		in   string
		want []Field
	}{
		{"", nil},
		{"keys=1", []Field{{"keys", "1"}}},
		{"a=1,b=,c", []Field{{"a", "1"}, {"b", ""}, {"c", ""}}},
		{"using=[a,b],x=2", []Field{{"using", "[a,b]"}, {"x", "2"}}},
		{"u=[[a,b],c],x=]", []Field{{"u", "[[a,b],c]"}, {"x", "]"}}},
		{",,a=1,", []Field{{"a", "1"}}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, ParseKV(tt.in)); d != "" {
			t.Errorf("ParseKV(%q) (-want +got):\n%s", tt.in, d)
		}
	}
}

func TestInfoFieldsBeforeHeader(t *testing.T) {
	info := ParseInfo("loading:0\n# Stats\nrejected_connections:4\n")
	if v, ok := info.Get("loading"); !ok || v != "0" {
		t.Errorf("loading = %q, %v", v, ok)
	}
	if n, _ := info.Int("rejected_connections"); n != 4 {
		t.Errorf("rejected_connections = %d", n)
	}
	var nilInfo *Info
	if _, ok := nilInfo.Get("x"); ok {
		t.Error("nil Info returned a value")
	}
}
