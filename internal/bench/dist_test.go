package bench

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"redline/internal/resp"
)

func TestPayloadMatchesRedisBenchmark(t *testing.T) {
	if got := string(NewPayload().Next(3)); got != "VXK" {
		t.Errorf("-d 3 payload %q, want VXK", got)
	}
	if got := string(NewPayload().Next(10)); got != "VXKeHogKgJ" {
		t.Errorf("-d 10 payload %q, want VXKeHogKgJ", got)
	}
	p := NewPayload()
	a, b := p.Next(3), p.Next(3)
	if string(a) == string(b) {
		t.Errorf("the sequence should continue across passes (-l)")
	}
}

func TestZipfFrequencies(t *testing.T) {
	for _, s := range []float64{0.5, 0.99, 1.0, 1.5} {
		z := newZipfKeys(1000, s)
		r := rand.New(rand.NewPCG(1, 1))
		counts := make([]int, 1000)
		const n = 400000
		for range n {
			k := z.next(r)
			if k >= 1000 {
				t.Fatalf("s=%v: key %d out of range", s, k)
			}
			counts[k]++
		}
		// P(k) ∝ k^-s, so count(rank1)/count(rank2) ≈ 2^s.
		ratio := float64(counts[0]) / float64(counts[1])
		if math.Abs(ratio-math.Pow(2, s))/math.Pow(2, s) > 0.1 {
			t.Errorf("s=%v: rank1/rank2 = %.3f, want %.3f", s, ratio, math.Pow(2, s))
		}
		if counts[0] < counts[10] || counts[10] < counts[500] {
			t.Errorf("s=%v: frequencies not decreasing: %d %d %d", s, counts[0], counts[10], counts[500])
		}
	}
}

func TestGaussianAndSequentialKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	g, _ := newKeySource(KeyOptions{Dist: KeyGaussian, Space: 600})
	sum := 0.0
	for range 100000 {
		k := g.next(r)
		if k >= 600 {
			t.Fatalf("gaussian key %d out of range", k)
		}
		sum += float64(k)
	}
	if mean := sum / 100000; math.Abs(mean-300) > 5 {
		t.Errorf("gaussian mean %.1f, want about 300", mean)
	}
	s, _ := newKeySource(KeyOptions{Dist: KeySequential, Space: 5})
	var got []uint64
	for range 7 {
		got = append(got, s.next(r))
	}
	if want := []uint64{0, 1, 2, 3, 4, 0, 1}; !equalU(got, want) {
		t.Errorf("sequential %v, want %v", got, want)
	}
	if err := (KeyOptions{Dist: KeyZipf, Space: 10, ZipfExp: -1}).Validate(); err == nil {
		t.Error("negative zipf exponent accepted")
	}
	if err := (KeyOptions{Dist: KeyZipf}).Validate(); err == nil || !strings.Contains(err.Error(), "-r") {
		t.Errorf("zipf without key space: %v", err)
	}
}

func equalU(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSizeSpecs(t *testing.T) {
	s, err := ParseSizeList("32:1,1024:3")
	if err != nil {
		t.Fatal(err)
	}
	src := newSizeSource(s)
	r := rand.New(rand.NewPCG(3, 3))
	big := 0
	for range 40000 {
		switch src.next(r) {
		case 1024:
			big++
		case 32:
		default:
			t.Fatal("size not in the list")
		}
	}
	if frac := float64(big) / 40000; math.Abs(frac-0.75) > 0.02 {
		t.Errorf("1024-byte share %.3f, want 0.75", frac)
	}
	rg, _ := ParseSizeRange("10-20")
	src = newSizeSource(rg)
	for range 1000 {
		if v := src.next(r); v < 10 || v > 20 {
			t.Fatalf("size %d outside 10-20", v)
		}
	}
	for _, bad := range []string{"", "5", "0-3", "3-1", "a-b"} {
		if _, err := ParseSizeRange(bad); err == nil {
			t.Errorf("range %q accepted", bad)
		}
	}
	for _, bad := range []string{"", "32", "32:0", "0:1", "x:1"} {
		if _, err := ParseSizeList(bad); err == nil {
			t.Errorf("list %q accepted", bad)
		}
	}
}

func TestMixScheduleIsSmooth(t *testing.T) {
	s := mixSchedule([]int{1, 10})
	if len(s) != 11 {
		t.Fatalf("len %d", len(s))
	}
	sets := 0
	for _, c := range s {
		if c == 0 {
			sets++
		}
	}
	if sets != 1 {
		t.Errorf("%d SETs per cycle of 11, want 1", sets)
	}
	s = mixSchedule([]int{2, 2})
	if s[0] == s[1] && s[1] == s[2] {
		t.Errorf("2:2 not interleaved: %v", s)
	}
}

// TestGeneratorEncodesValidRESP checks every generator path against the
// reply parser: fixed templates, variable sizes, inline, placeholders.
func TestGeneratorEncodesValidRESP(t *testing.T) {
	data := NewPayload().Next(50)
	cases := []struct {
		args   []string
		inline bool
		sizes  SizeSpec
	}{
		{[]string{"SET", "key:__rand_int__", Data}, false, SizeSpec{Min: 3, Max: 3}},
		{[]string{"MSET", "k:__rand_int__", Data, "k:__rand_int__", Data}, false, SizeSpec{Min: 10, Max: 10}},
		{[]string{"SET", "x__rand_int__y__rand_int__", "a" + Data + "b"}, false, SizeSpec{Min: 5, Max: 50}},
		{[]string{"PING"}, true, SizeSpec{Min: 3, Max: 3}},
		{[]string{"SET", "k", ""}, false, SizeSpec{Min: 3, Max: 3}},
	}
	for _, c := range cases {
		var fixed []byte
		if c.sizes.Fixed() {
			fixed = data[:c.sizes.Min]
		}
		cmd, err := compile(c.args, c.inline, true, fixed)
		if err != nil {
			t.Fatal(err)
		}
		ks, _ := newKeySource(KeyOptions{Space: 1000})
		g := generator{cmds: []command{cmd}, keys: ks, sizes: newSizeSource(c.sizes), data: data, rng: rand.New(rand.NewPCG(1, 1))}
		var buf []byte
		for range 20 {
			buf, _ = g.appendRequest(buf)
		}
		if c.inline {
			if string(buf[:6]) != "PING\r\n" {
				t.Errorf("inline %q", buf[:6])
			}
			continue
		}
		for range 20 {
			v, n, err := resp.Parse(buf)
			if err != nil || n == 0 || v.Type != '*' || len(v.Elems) != len(c.args) {
				t.Fatalf("%v: bad encoding %q: %v", c.args, buf, err)
			}
			for i, e := range v.Elems {
				if strings.Contains(e.Str, RandInt) || strings.Contains(e.Str, Data) {
					t.Errorf("%v: placeholder left in %q", c.args, e.Str)
				}
				_ = i
			}
			buf = buf[n:]
		}
	}
}

func TestPutKey(t *testing.T) {
	b := make([]byte, 12)
	putKey(b, 74)
	if string(b) != "000000000074" {
		t.Errorf("putKey(74) = %s", b)
	}
}

func BenchmarkAppendRequestFixed(b *testing.B) {
	cmd, _ := compile([]string{"SET", "key:__rand_int__", Data}, false, true, []byte("VXK"))
	ks, _ := newKeySource(KeyOptions{Space: 1000000})
	g := generator{cmds: []command{cmd}, keys: ks, rng: rand.New(rand.NewPCG(1, 1))}
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = g.appendRequest(buf[:0])
	}
}

func BenchmarkScanReplies(b *testing.B) {
	in := []byte(strings.Repeat("+OK\r\n", 16) + "$3\r\nVXK\r\n")
	b.ReportAllocs()
	for b.Loop() {
		pos := 0
		for pos < len(in) {
			n, _, _, _ := resp.Scan(in[pos:])
			pos += n
		}
	}
}
