package redisserver

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// allocators maps an allocator name (a lab ServerSpec.Allocator) to the shared libraries that
// provide it, as Debian and its derivatives package them, and the package
// to install. Debian's redis-server links the system jemalloc and calls the
// plain malloc/free, so a preloaded allocator takes their place.
var allocators = map[string]struct {
	libs []string
	pkg  string
}{
	"jemalloc": {[]string{"libjemalloc.so.2"}, "libjemalloc2"},
	"tcmalloc": {[]string{"libtcmalloc_minimal.so.4", "libtcmalloc.so.4"}, "libtcmalloc-minimal4"},
	"mimalloc": {[]string{"libmimalloc.so.2", "libmimalloc.so.2.0"}, "libmimalloc2.0"},
}

// libDirs are searched for allocator libraries.
var libDirs = []string{"/usr/lib/*-linux-gnu", "/lib/*-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"}

// AllocatorNames lists the allocators a server can be started with.
func AllocatorNames() []string {
	names := make([]string, 0, len(allocators))
	for n := range allocators {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// AllocatorLib finds the library of allocator name on this machine.
func AllocatorLib(name string) (string, error) {
	a, ok := allocators[name]
	if !ok {
		return "", fmt.Errorf("unknown allocator %q (known: %s)", name, strings.Join(AllocatorNames(), ", "))
	}
	for _, pattern := range libDirs {
		dirs, _ := filepath.Glob(pattern)
		for _, d := range dirs {
			for _, lib := range a.libs {
				p := filepath.Join(d, lib)
				if _, err := os.Stat(p); err == nil {
					return p, nil
				}
			}
		}
	}
	return "", fmt.Errorf("allocator %s: %s not found (install it: apt-get install -y %s)", name, strings.Join(a.libs, " or "), a.pkg)
}

// CheckMapped confirms that a running server really loaded lib.
func CheckMapped(pid int, lib string) error {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return fmt.Errorf("check the allocator of pid %d: %w", pid, err)
	}
	real, err := filepath.EvalSymlinks(lib)
	if err != nil {
		real = lib
	}
	if !strings.Contains(string(b), real) && !strings.Contains(string(b), lib) {
		return fmt.Errorf("redis-server (pid %d) was started with LD_PRELOAD=%s but does not map it (a static allocator, or a setuid binary?)", pid, lib)
	}
	return nil
}
