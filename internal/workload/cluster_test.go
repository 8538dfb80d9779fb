package workload

import (
	"context"
	"testing"

	"redline/internal/bench"
	"redline/internal/redistest"
)

// TestWorkloadOnCluster runs a file's preload and mix through --cluster:
// every request goes to its key's slot (a MOVED would end the run), and
// EVALSHA, whose key COMMAND INFO cannot place, is routed by {key}.
func TestWorkloadOnCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	f, err := Parse([]byte(`version: 1
keyspaces:
  h: {prefix: "h:", count: 300}
scripts:
  get: "return redis.call('HGET', KEYS[1], 'f0')"
preload:
  - {keys: h, type: hash, elements: {fixed: 3}, value: {fixed: 8}, ttl: {share: 0.5, min: 1h, max: 2h}}
run:
  ops:
    - {weight: 3, command: [HGET, "{key}", "{field}"], keys: h, members: 3}
    - {weight: 1, command: [EVALSHA, "{sha:get}", "1", "{key}"], keys: h}
`))
	if err != nil {
		t.Fatal(err)
	}
	o := bench.DefaultOptions()
	o.Addr, o.Cluster, o.Clients = cl.Seed(), true, 4
	ctx := context.Background()
	if err := Fill(ctx, o, f); err != nil {
		t.Fatalf("preload: %v", err)
	}
	keys := 0
	for _, n := range cl.Primaries {
		c := redistest.Client(t, n)
		v := redistest.Do(t, c, "DBSIZE")
		if v.Str == "0" {
			t.Errorf("primary %s holds no key: the preload was not spread by slot", n.Addr())
		}
		var k int
		for _, ch := range v.Str {
			k = k*10 + int(ch-'0')
		}
		keys += k
	}
	if keys != 300 {
		t.Errorf("%d keys over the primaries, want 300", keys)
	}
	tt, err := Test(f, "")
	if err != nil {
		t.Fatal(err)
	}
	o.Requests = 2000
	sum, err := bench.Run(ctx, o, tt, nil)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if sum.Requests != 2000 {
		t.Errorf("%d requests measured, want 2000", sum.Requests)
	}
}
