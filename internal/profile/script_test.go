package profile

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"redline/internal/testutil"
)

const fixtures = "../../testdata/profile/"

func folded(t testing.TB, p *Profile) string {
	t.Helper()
	var b bytes.Buffer
	if err := p.WriteFolded(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestParsePerfScript(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"minimal fields, offsets stripped, kernel by dso",
			"redis-server 12529 \n\tffffffff8212ea54 unix_stream_read_generic+0xba4 ([kernel.kallsyms])\n\t  f82ec read+0x4c (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\n",
			"redis-server;read;unix_stream_read_generic_[k] 1\n"},
		{"default header, comm with a space, same stacks merged",
			"redis server 7 7 41.2:  1001001 cpu-clock:ppp: \n\t1 a (/x)\n\nredis server 7 7 41.3:  1001001 cpu-clock:ppp: \n\t1 a (/x)\n",
			"redis_server;a 2\n"},
		{"unknown frames collapse, named by dso (redis-check-rdb is redis-server), module is kernel",
			"io_thd_1 9\n\tffffffffc0001000 nft_do_chain ([nf_tables])\n\t13bfa0 [unknown] (/usr/bin/redis-check-rdb)\n\t1000000000003 [unknown] ([unknown])\n\t6418ec8348d38948 [unknown] ([unknown])\n",
			"io_thd_1;[unknown];[redis-server];nft_do_chain_[k] 1\n"},
		{"kernel by address, ; in a name", "t 1\n\tffffffff81000000 a;b ([unknown])\n",
			"t;a:b_[k] 1\n"},
		{"a sample without frames is its thread", "t 1\n\n", "t 1\n"},
	} {
		p, err := ParsePerfScript(strings.NewReader(c.in))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := folded(t, p); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

func TestParsePerfScriptErrors(t *testing.T) {
	for _, in := range []string{"\tffff a (b)\n", "t 1\n\tzz a (b)\n", "t 1\n\tnoaddress\n"} {
		if _, err := ParsePerfScript(strings.NewReader(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestParseFolded(t *testing.T) {
	in := "b;c_[k] 2\n\na;b 1\nb;c_[k] 3\n"
	p, err := ParseFolded(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff("a;b 1\nb;c_[k] 5\n", folded(t, p)); d != "" {
		t.Error(d)
	}
	if !p.Stacks[1].Frames[1].Kernel || p.Stacks[1].Frames[1].Name != "c" {
		t.Errorf("kernel frame: %+v", p.Stacks[1].Frames[1])
	}
	for _, bad := range []string{"a;b\n", "a;b x\n", "a -1\n"} {
		if _, err := ParseFolded(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// fixture parses a real perf script capture (testdata/profile/SOURCE).
func fixture(t testing.TB, name string) *Profile {
	t.Helper()
	f, err := os.Open(fixtures + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := ParsePerfScript(f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFixtureFolded(t *testing.T) {
	for _, name := range []string{"tcp", "unix"} {
		p := fixture(t, "perf-script-"+name+".txt")
		if p.Samples() != 60 {
			t.Errorf("%s: %d samples, want 60", name, p.Samples())
		}
		got := folded(t, p)
		testutil.Golden(t, fixtures+"folded-"+name+".golden", []byte(got))
		back, err := ParseFolded(strings.NewReader(got))
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(p, back); d != "" {
			t.Errorf("%s: folded round trip (-parsed +reread):\n%s", name, d)
		}
	}
}

func FuzzParsePerfScript(f *testing.F) {
	for _, name := range []string{"perf-script-tcp.txt", "perf-script-unix.txt"} {
		data, err := os.ReadFile(fixtures + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data[:min(len(data), 2000)]))
	}
	f.Add("t 1\n\tffffffff81000000 a+0x1 ([kernel.kallsyms])\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ParsePerfScript(strings.NewReader(in))
		if err != nil {
			return
		}
		text := folded(t, p)
		back, err := ParseFolded(strings.NewReader(text))
		if err != nil {
			t.Fatalf("folded output does not parse: %v\n%q", err, text)
		}
		if got := folded(t, back); got != text {
			t.Fatalf("folded round trip:\n%q\n%q", text, got)
		}
		Top(p, 5)
		WriteFlameSVG(&bytes.Buffer{}, p, FlameOptions{})
	})
}

func FuzzParseFolded(f *testing.F) {
	f.Add("a;b_[k] 3\nc 1\n")
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ParseFolded(strings.NewReader(in))
		if err != nil {
			return
		}
		WriteDiffFlameSVG(&bytes.Buffer{}, p, p, FlameOptions{})
		Diff(p, p, 0)
	})
}
