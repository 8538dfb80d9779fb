package bench

import "testing"

func TestHashSlot(t *testing.T) {
	// Values from the cluster specification and redis-cli CLUSTER KEYSLOT.
	cases := []struct {
		key  string
		want uint16
	}{
		{"123456789", 0x31C3 & 16383}, // the spec's CRC16 check value 0x31C3
		{"foo", 12182},
		{"bar", 5061},
		{"{user1000}.following", 3443},
		{"{user1000}.followers", 3443},
		{"user1000", 3443},
		{"foo{}{bar}", HashSlot([]byte("foo{}{bar}"))}, // empty tag: whole key
		{"foo{{bar}}zap", HashSlot([]byte("{bar"))},
		{"foo{bar}{zap}", HashSlot([]byte("bar"))},
		{"{", HashSlot([]byte("{"))},
	}
	for _, c := range cases {
		if got := HashSlot([]byte(c.key)); got != c.want {
			t.Errorf("HashSlot(%q) = %d, want %d", c.key, got, c.want)
		}
	}
	if HashSlot([]byte("foo{}{bar}")) == HashSlot([]byte("bar")) {
		t.Error("an empty tag must hash the whole key")
	}
}

func TestRespArg(t *testing.T) {
	req := []byte("*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000042\r\n$3\r\nxyz\r\n")
	for i, want := range []string{"SET", "key:000000000042", "xyz", ""} {
		if got := string(respArg(req, i)); got != want {
			t.Errorf("arg %d = %q, want %q", i, got, want)
		}
	}
	if respArg([]byte("PING\r\n"), 0) != nil {
		t.Error("inline command has no RESP arguments")
	}
}

func TestSlotTags(t *testing.T) {
	for s := range ClusterSlots {
		tag := slotTag(uint16(s))
		if got := HashSlot(append([]byte("key"), tag[:]...)); got != uint16(s) {
			t.Fatalf("slot tag %q hashes to %d, want %d", tag, got, s)
		}
	}
}

func TestTaggedRequestSharesSlot(t *testing.T) {
	tests, _ := SuiteTests([]string{"mset"}, true)
	cmd, err := compile(tests[0].Tagged, false, true, []byte("VXK"))
	if err != nil {
		t.Fatal(err)
	}
	ks, _ := newKeySource(KeyOptions{Space: 1000000})
	g := generator{cmds: []command{cmd}, keys: ks, rng: newRand(1, 1)}
	slots := map[uint16]bool{}
	for range 50 {
		req, _ := g.appendRequest(nil)
		first := HashSlot(respArg(req, 1))
		for i := 3; i <= 19; i += 2 {
			if s := HashSlot(respArg(req, i)); s != first {
				t.Fatalf("keys of one MSET in slots %d and %d: %q", first, s, req)
			}
		}
		slots[first] = true
	}
	if len(slots) < 40 {
		t.Errorf("50 requests used %d slots, want them spread", len(slots))
	}
}

// BenchmarkClusterRoute is the per-request cost of cluster routing: find
// the key in the encoded request and hash it to its slot.
func BenchmarkClusterRoute(b *testing.B) {
	req := []byte("*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000042\r\n$3\r\nxyz\r\n")
	var sink uint16
	b.ReportAllocs()
	for b.Loop() {
		sink += HashSlot(respArg(req, 1))
	}
	_ = sink
}
