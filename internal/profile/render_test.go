package profile

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"redline/internal/testutil"
)

func TestTopGolden(t *testing.T) {
	top := Top(fixture(t, "perf-script-tcp.txt"), 10)
	var b bytes.Buffer
	if err := WriteTop(&b, top); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, fixtures+"top-tcp.golden", b.Bytes())
	j, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, fixtures+"top-tcp.json.golden", append(j, '\n'))
}

func TestTopCounts(t *testing.T) {
	p, err := ParseFolded(strings.NewReader("t;a;b;a 2\nt;a;c_[k] 1\nt;c 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	top := Top(p, 0)
	if top.Samples != 4 || top.KernelSamples != 1 || top.KernelPct != 25 {
		t.Errorf("totals: %+v", top)
	}
	// a is on every stack but the last, counted once a sample despite
	// recursion; self only where it is the leaf.
	want := []Function{{Name: "a", Self: 2, Total: 3, SelfPct: 50, TotalPct: 75},
		{Name: "b", Self: 0, Total: 2, SelfPct: 0, TotalPct: 50}, {Name: "c", Self: 1, Total: 1, SelfPct: 25, TotalPct: 25}}
	if len(top.User) != 3 || top.User[0] != want[0] || top.User[1] != want[2] || top.User[2] != want[1] {
		t.Errorf("user: %+v", top.User)
	}
	if len(top.Kernel) != 1 || top.Kernel[0].Name != "c" || !top.Kernel[0].Kernel {
		t.Errorf("kernel: %+v", top.Kernel)
	}
}

func TestFlameGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteFlameSVG(&b, fixture(t, "perf-script-tcp.txt"), FlameOptions{Title: "redis-server <tcp> & \"set,get\""}); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	testutil.Golden(t, fixtures+"flame-tcp.svg.golden", b.Bytes())
	for _, bad := range []string{"<script", "href", "http://www.w3.org/1999", "<tcp>"} {
		if strings.Contains(svg, bad) {
			t.Errorf("SVG holds %q", bad)
		}
	}
	if !strings.Contains(svg, "&lt;tcp&gt; &amp; &#34;set,get&#34;") {
		t.Error("title not escaped")
	}
}

func TestDiffGolden(t *testing.T) {
	base, p := fixture(t, "perf-script-unix.txt"), fixture(t, "perf-script-tcp.txt")
	var b bytes.Buffer
	if err := WriteDiff(&b, Diff(base, p, 15)); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, fixtures+"diff-unix-tcp.golden", b.Bytes())
	b.Reset()
	if err := WriteDiffFlameSVG(&b, base, p, FlameOptions{Title: "tcp against unix"}); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, fixtures+"diff-unix-tcp.svg.golden", b.Bytes())
}

func TestDiffMoves(t *testing.T) {
	base, _ := ParseFolded(strings.NewReader("t;a 3\nt;b 1\n"))
	p, _ := ParseFolded(strings.NewReader("t;a 1\nt;c_[k] 1\n"))
	moves := Diff(base, p, 0)
	got := map[string]float64{}
	for _, m := range moves {
		got[m.Name] = m.DeltaSelfPct
	}
	if got["a"] != -25 || got["b"] != -25 || got["c"] != 50 || moves[0].Name != "c" || !moves[0].Kernel {
		t.Errorf("moves: %+v", moves)
	}
}

func TestFlameEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := WriteFlameSVG(&b, &Profile{}, FlameOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "0 samples") || !strings.HasSuffix(b.String(), "</svg>\n") {
		t.Errorf("empty profile: %s", b.String())
	}
}
