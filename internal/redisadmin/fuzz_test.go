package redisadmin

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParseInfo feeds arbitrary text to the INFO parser: it must not panic,
// its typed views must not panic, and rendering what it parsed and parsing
// that again must give the same sections.
func FuzzParseInfo(f *testing.F) {
	if b, err := os.ReadFile("testdata/info-7.0.15.txt"); err == nil {
		f.Add(string(b))
	}
	f.Add("# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n")
	f.Add("module:name=x,using=[a,b\n#\n:\nslave0:ip=,port=x\n")
	f.Add("cmdstat_:calls=,usec=-1\nlatency_percentiles_usec_get:p50=x,p99=1e400\n")
	f.Fuzz(func(t *testing.T, text string) {
		info := ParseInfo(text)
		info.Keyspace()
		info.Commandstats()
		info.Errorstats()
		info.Latencystats()
		info.Replicas()
		info.Modules()
		info.ProcessID()
		again := ParseInfo(info.String())
		if d := cmp.Diff(info.Sections, again.Sections); d != "" {
			t.Fatalf("round trip changed the sections (-first +second):\n%s\ninput %q", d, text)
		}
		for _, s := range info.Sections {
			for _, fl := range s.Fields {
				if _, ok := info.Get(fl.Key); !ok {
					t.Fatalf("field %q parsed but Get does not find it", fl.Key)
				}
			}
		}
	})
}
