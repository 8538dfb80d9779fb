package redisserver

import (
	"fmt"
	"sort"
	"strconv"
)

// Spec is a server as a lab scenario or a session's redis.start describes
// it (labdata.ServerSpec converts to it: the same fields): its binary,
// config lines, environment, allocator by name, CPU list and NUMA node.
type Spec struct {
	Binary    string
	Config    []string
	Env       map[string]string
	Allocator string
	CPUs      string
	NUMANode  *int
}

// SpecOptions maps a Spec onto Options: its config lines and
// environment, the allocator preloaded (LD_PRELOAD), CPU pinning with
// taskset and NUMA binding with numactl. The lab's servers and a remote
// session's are started through it, so both read a spec alike.
func SpecOptions(spec Spec) (Options, error) {
	o := Options{Binary: spec.Binary, Config: append([]string{}, spec.Config...)}
	keys := make([]string, 0, len(spec.Env))
	for k := range spec.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		o.Env = append(o.Env, k+"="+spec.Env[k])
	}
	if spec.Allocator != "" {
		lib, err := AllocatorLib(spec.Allocator)
		if err != nil {
			return o, err
		}
		if _, set := spec.Env["LD_PRELOAD"]; set {
			return o, fmt.Errorf("allocator %s and an LD_PRELOAD in env: give one", spec.Allocator)
		}
		o.Env = append(o.Env, "LD_PRELOAD="+lib)
	}
	if spec.NUMANode != nil {
		n := strconv.Itoa(*spec.NUMANode)
		o.Wrap = append(o.Wrap, []string{"numactl", "--cpunodebind=" + n, "--membind=" + n})
	}
	if spec.CPUs != "" {
		o.Wrap = append(o.Wrap, []string{"taskset", "-c", spec.CPUs})
	}
	return o, nil
}

// CheckAllocator confirms that a server started from spec maps the
// allocator the spec names (nothing to check without one).
func CheckAllocator(pid int, spec Spec) error {
	if spec.Allocator == "" {
		return nil
	}
	lib, err := AllocatorLib(spec.Allocator)
	if err != nil {
		return err
	}
	return CheckMapped(pid, lib)
}
