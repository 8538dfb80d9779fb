package host

import (
	"path/filepath"
	"testing"

	"redline/internal/testutil"
)

func TestReadLLC(t *testing.T) {
	base := "sys/devices/system/cpu/cpu0/cache/"
	cases := []struct {
		name  string
		files map[string]string
		want  string // "" for none
	}{
		{"no cache directory", map[string]string{}, ""},
		{"highest level wins", map[string]string{
			base + "index0/level": "1\n", base + "index0/type": "Data\n", base + "index0/shared_cpu_list": "0,48\n",
			base + "index2/level": "2\n", base + "index2/type": "Unified\n", base + "index2/shared_cpu_list": "0,48\n",
			base + "index3/level": "3\n", base + "index3/type": "Unified\n", base + "index3/shared_cpu_list": "0-2,48-50\n",
		}, "0-2,48-50"},
		{"an instruction cache never counts", map[string]string{
			base + "index0/level": "1\n", base + "index0/type": "Data\n", base + "index0/shared_cpu_list": "0\n",
			base + "index1/level": "2\n", base + "index1/type": "Instruction\n", base + "index1/shared_cpu_list": "0-1\n",
		}, "0"},
		{"a level without its CPUs", map[string]string{
			base + "index0/level": "1\n", base + "index0/shared_cpu_list": "0\n",
			base + "index3/level": "3\n",
		}, "0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{"proc/cpuinfo": "", "sys/devices/system/cpu/online": "0\n"}
			for k, v := range c.files {
				files[k] = v
			}
			fs, err := NewFS(testutil.WriteTree(t, files))
			if err != nil {
				t.Fatal(err)
			}
			r := newReader(fs, Options{NoProcesses: true})
			got := readLLC(r, "/sys/devices/system/cpu", 0)
			switch {
			case c.want == "" && got != nil:
				t.Errorf("got %s, want none", got.List())
			case c.want != "" && (got == nil || got.List() != c.want):
				t.Errorf("got %v, want %s", got, c.want)
			}
		})
	}
}

// On a real EPYC 7451 capture every CPU has its L3 domain: 16 of them,
// two per node, 6 CPUs each.
func TestReadLLCEpyc(t *testing.T) {
	fs, err := NewFS(filepath.Join("..", "..", "testdata", "steer", "hosts", "amd-epyc7451"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Read(fs, Options{NoProcesses: true})
	if err != nil {
		t.Fatal(err)
	}
	domains := map[string]int{}
	for _, c := range s.CPU.CPUs {
		if c.LLC == nil {
			t.Fatalf("cpu %d has no LLC", c.ID)
		}
		domains[c.LLC.List()]++
	}
	if len(domains) != 16 || domains["3-5,51-53"] != 6 {
		t.Errorf("LLC domains %v, want 16 of 6 CPUs (3-5,51-53 among them)", domains)
	}
}
