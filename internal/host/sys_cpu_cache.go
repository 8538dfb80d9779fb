package host

import "fmt"

// A CPU's caches are described in /sys/devices/system/cpu/cpuN/cache,
// one indexM directory per cache (absent on some virtual machines):
//
//	cpu3/cache/index3/level            3
//	cpu3/cache/index3/type             Unified
//	cpu3/cache/index3/shared_cpu_list  0-5,48-53
//
// The last-level cache is the highest level's; the CPUs sharing it are
// one LLC domain (a CCX on AMD EPYC, a die or a socket elsewhere).

// readLLC returns the CPUs sharing cpu's last-level cache, nil when the
// kernel does not describe its caches.
func readLLC(r *reader, base string, cpu int) *CPUSet {
	dir := fmt.Sprintf("%s/cpu%d/cache", base, cpu)
	best := -1
	var shared *CPUSet
	for _, i := range numbered(r.dir(dir), "index") {
		idx := fmt.Sprintf("%s/index%d", dir, i)
		level, ok := r.int(idx + "/level")
		if !ok || *level <= best {
			continue
		}
		if t, ok := r.str(idx + "/type"); ok && t == "Instruction" {
			continue
		}
		if set, ok := r.cpuList(idx + "/shared_cpu_list"); ok {
			best, shared = *level, set
		}
	}
	return shared
}
