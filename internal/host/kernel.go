package host

import (
	"strings"
)

// Kernel facts come from small files:
//
//	/proc/sys/kernel/osrelease  6.18.44-fc-v669
//	/proc/sys/kernel/arch       x86_64            (5.19+)
//	/proc/version               Linux version 6.18.44 (builder@host) (gcc ...) #1 SMP ...
//	/proc/cmdline               BOOT_IMAGE=/vmlinuz root=UUID=... ro isolcpus=2-3 -- init args
//	/proc/sys/kernel/hostname   vm
func readKernel(r *reader) error {
	k := &r.snap.Kernel
	k.Release, _ = r.str("/proc/sys/kernel/osrelease")
	k.Arch, _ = r.str("/proc/sys/kernel/arch")
	k.Version, _ = r.str("/proc/version")
	if cmd, ok := r.str("/proc/cmdline"); ok {
		k.Cmdline = cmd
		k.Params = parseCmdline(cmd)
	}
	r.snap.Hostname, _ = r.str("/proc/sys/kernel/hostname")
	return nil
}

// parseCmdline splits a kernel command line into its parameters, as the
// kernel's next_arg does: double quotes group spaces, and "--" ends the
// kernel's part (what follows goes to init).
func parseCmdline(s string) map[string]string {
	params := map[string]string{}
	for _, arg := range splitCmdline(s) {
		if arg == "--" {
			break
		}
		k, v, _ := strings.Cut(arg, "=")
		params[k] = strings.Trim(v, `"`)
	}
	if len(params) == 0 {
		return nil
	}
	return params
}

func splitCmdline(s string) []string {
	var args []string
	var cur strings.Builder
	quoted, inArg := false, false
	for _, c := range s {
		switch {
		case c == '"':
			quoted = !quoted
			inArg = true
			cur.WriteRune(c)
		case (c == ' ' || c == '\t' || c == '\n') && !quoted:
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(c)
			inArg = true
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args
}
