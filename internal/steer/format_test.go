package steer

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readFixtureFormat(t testing.TB, name string) Format {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "steer", "tracefs", name))
	if err != nil {
		t.Fatal(err)
	}
	f, err := parseFormat(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestParseFormatFixture(t *testing.T) {
	f := readFixtureFormat(t, "napi_gro_receive_entry.format")
	if f.Name != "napi_gro_receive_entry" || f.ID != 2300 {
		t.Fatalf("name %q id %d", f.Name, f.ID)
	}
	want := map[string]Field{
		"name":          {Name: "name", Type: "__data_loc char[]", Offset: 8, Size: 4, DataLoc: true},
		"queue_mapping": {Name: "queue_mapping", Type: "u16", Offset: 16, Size: 2},
		"skbaddr":       {Name: "skbaddr", Type: "const void *", Offset: 24, Size: 8},
		"common_pid":    {Name: "common_pid", Type: "int", Offset: 4, Size: 4, Signed: true},
	}
	for name, w := range want {
		if d := cmp.Diff(w, f.Fields[name]); d != "" {
			t.Errorf("field %s (-want +got):\n%s", name, d)
		}
	}
}

func TestParseField(t *testing.T) {
	cases := []struct {
		line string
		want Field
		err  bool
	}{
		{"field:u16 queue_mapping;\toffset:16;\tsize:2;\tsigned:0;", Field{Name: "queue_mapping", Type: "u16", Offset: 16, Size: 2}, false},
		{"field:const void * skbaddr;\toffset:8;\tsize:8;\tsigned:0;", Field{Name: "skbaddr", Type: "const void *", Offset: 8, Size: 8}, false},
		{"field:const void *skbaddr;\toffset:8;\tsize:4;\tsigned:0;", Field{Name: "skbaddr", Type: "const void *", Offset: 8, Size: 4}, false},
		{"field:char comm[16];\toffset:8;\tsize:16;\tsigned:1;", Field{Name: "comm", Type: "char[16]", Offset: 8, Size: 16, Signed: true}, false},
		{"field:__data_loc char[] name;\toffset:8;\tsize:4;\tsigned:0;", Field{Name: "name", Type: "__data_loc char[]", Offset: 8, Size: 4, DataLoc: true}, false},
		{"field:int len;\toffset:x;\tsize:4;", Field{}, true},
		{"field:int len", Field{}, true},
		{"field:int len;\toffset:16;\tsize:0;\tsigned:1;", Field{}, true},
	}
	for _, c := range cases {
		got, err := parseField(c.line)
		if (err != nil) != c.err {
			t.Errorf("%q: err %v", c.line, err)
			continue
		}
		if !c.err {
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("%q (-want +got):\n%s", c.line, d)
			}
		}
	}
}

func TestParseFormatNeedsID(t *testing.T) {
	if _, err := parseFormat("name: x\nformat:\n"); err == nil {
		t.Fatal("want an error without an ID line")
	}
}

func TestParseMountinfoTracefs(t *testing.T) {
	cases := map[string]string{
		"36 25 0:12 / /sys/kernel/tracing rw,nosuid,nodev,noexec,relatime shared:15 - tracefs tracefs rw": "/sys/kernel/tracing",
		"37 25 0:13 / /tmp/a\\040b rw - tracefs nodev rw":                                                 "/tmp/a b",
		"22 1 0:20 / /sys rw,nosuid - sysfs sysfs rw":                                                     "",
		"garbage": "",
	}
	for line, want := range cases {
		if got := parseMountinfoTracefs(line); got != want {
			t.Errorf("%q: got %q want %q", line, got, want)
		}
	}
}

// sample builds the body of a PERF_RECORD_SAMPLE (TID|TIME|CPU|RAW) at
// time 0.
func sample(pid, tid, cpu uint32, raw []byte) []byte { return sampleAt(pid, tid, cpu, 0, raw) }

// sampleAt is sample at time at (CLOCK_MONOTONIC ns).
func sampleAt(pid, tid, cpu uint32, at uint64, raw []byte) []byte {
	ne := binary.NativeEndian
	b := make([]byte, sampleHead, sampleHead+len(raw))
	ne.PutUint32(b[0:], pid)
	ne.PutUint32(b[4:], tid)
	ne.PutUint64(b[8:], at)
	ne.PutUint32(b[16:], cpu)
	ne.PutUint32(b[24:], uint32(len(raw)))
	return append(b, raw...)
}

// groRaw builds a napi_gro_receive_entry record with the fixture layout.
func groRaw(id uint16, dev string, queue uint16, skb uint64) []byte {
	ne := binary.NativeEndian
	raw := make([]byte, 80, 80+len(dev)+1)
	ne.PutUint16(raw[0:], id)
	ne.PutUint32(raw[8:], uint32(len(dev)+1)<<16|80)
	ne.PutUint16(raw[16:], queue)
	ne.PutUint64(raw[24:], skb)
	return append(append(raw, dev...), 0)
}

func copyRaw(id uint16, skb uint64) []byte {
	ne := binary.NativeEndian
	raw := make([]byte, 24)
	ne.PutUint16(raw[0:], id)
	ne.PutUint64(raw[8:], skb)
	ne.PutUint32(raw[16:], 42)
	return raw
}

func fixtureDecoder(t testing.TB) *Decoder {
	d, err := NewDecoder(readFixtureFormat(t, "napi_gro_receive_entry.format"), readFixtureFormat(t, "skb_copy_datagram_iovec.format"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDecode(t *testing.T) {
	d := fixtureDecoder(t)
	cases := []struct {
		name string
		in   []byte
		want Event
		err  bool
	}{
		{"gro", sample(0, 0, 3, groRaw(2300, "eth0", 2, 0xffff8881)), Event{Kind: EventGRO, CPU: 3, Skb: 0xffff8881, Dev: "eth0", QueueMapping: 2}, false},
		{"copy", sample(100, 101, 1, copyRaw(2308, 0xffff8881)), Event{Kind: EventCopy, CPU: 1, PID: 100, TID: 101, Skb: 0xffff8881}, false},
		{"unknown id", sample(0, 0, 0, copyRaw(7, 1)), Event{}, true},
		{"short head", []byte{1, 2, 3}, Event{}, true},
		{"raw longer than record", sample(0, 0, 0, copyRaw(2308, 1))[:30], Event{}, true},
		{"copy too short", sample(0, 0, 0, copyRaw(2308, 1)[:10]), Event{}, true},
		{"name past end", sample(0, 0, 0, groRaw(2300, "eth0", 1, 1)[:82]), Event{}, true},
	}
	for _, c := range cases {
		got, err := d.Decode(c.in)
		if (err != nil) != c.err {
			t.Errorf("%s: err %v", c.name, err)
			continue
		}
		if !c.err {
			if df := cmp.Diff(c.want, got); df != "" {
				t.Errorf("%s (-want +got):\n%s", c.name, df)
			}
		}
	}
}

func FuzzDecode(f *testing.F) {
	d := fixtureDecoder(f)
	f.Add(sample(0, 0, 3, groRaw(2300, "eth0", 2, 0xffff8881)))
	f.Add(sample(100, 101, 1, copyRaw(2308, 0xffff8881)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := d.Decode(b)
		if err != nil {
			return
		}
		if ev.Kind != EventGRO && ev.Kind != EventCopy {
			t.Fatalf("decoded kind %d", ev.Kind)
		}
		if ev.Kind == EventGRO && len(ev.Dev) > len(b) {
			t.Fatalf("device name longer than the record")
		}
	})
}

// BenchmarkDecodeJoin is the sampler's user-space cost per packet: one
// GRO and one copy record decoded and joined.
func BenchmarkDecodeJoin(b *testing.B) {
	d := fixtureDecoder(b)
	j := NewJoiner(0)
	gro := make([][]byte, 1024)
	cp := make([][]byte, 1024)
	for i := range gro {
		gro[i] = sample(0, 0, 0, groRaw(2300, "eth0", uint16(1+i%4), uint64(0xffff0000+i*256)))
		cp[i] = sample(7, 7, 1, copyRaw(2308, uint64(0xffff0000+i*256)))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k := i % 1024
		ev, _ := d.Decode(gro[k])
		j.Add(ev)
		ev, _ = d.Decode(cp[k])
		j.Add(ev)
		if k == 1023 {
			j.Cut()
		}
	}
}

func TestFilters(t *testing.T) {
	cases := []struct {
		tids   []int
		sample int
		want   string
	}{
		{nil, 1, ""},
		{nil, 3, ""},
		{nil, 4, "!(skbaddr & 0xc00)"},
		{[]int{7}, 1, "(common_pid == 7)"},
		{[]int{7, 9}, 2, "(common_pid == 7 || common_pid == 9) && !(skbaddr & 0x400)"},
	}
	for _, c := range cases {
		if got := copyFilter(c.tids, sampleFilter(c.sample)); got != c.want {
			t.Errorf("tids %v sample %d: got %q want %q", c.tids, c.sample, got, c.want)
		}
	}
}
