package host

import (
	"fmt"
	"strings"
)

// Container detection, from files a container runtime leaves behind:
//
//	/.dockerenv                    (docker)
//	/run/.containerenv             (podman)
//	/run/systemd/container         lxc | docker | systemd-nspawn | podman
//	/proc/1/cgroup                 0::/kubepods/besteffort/pod.../...
//	/proc/self/mountinfo           ... /proc/sys ro,nosuid ... (read-only /proc/sys)

// cgroupHints name container managers by a word in PID 1's cgroup path.
var cgroupHints = []struct{ word, kind string }{
	{"kubepods", "kubernetes"},
	{"/docker", "docker"},
	{"docker-", "docker"},
	{"libpod", "podman"},
	{"/lxc", "lxc"},
	{"containerd", "containerd"},
}

func readContainer(r *reader) error {
	c := &r.snap.Container
	add := func(kind, evidence string) {
		if c.Kind == "" {
			c.Kind = kind
		}
		c.Detected = true
		c.Evidence = append(c.Evidence, evidence)
	}
	if r.fs.Exists("/.dockerenv") {
		add("docker", "/.dockerenv exists")
	}
	if r.fs.Exists("/run/.containerenv") {
		add("podman", "/run/.containerenv exists")
	}
	if s, ok := r.str("/run/systemd/container"); ok && s != "" {
		add(s, "/run/systemd/container says "+s)
	}
	if data, ok := r.file("/proc/1/cgroup"); ok {
		for _, h := range cgroupHints {
			if strings.Contains(string(data), h.word) {
				add(h.kind, fmt.Sprintf("/proc/1/cgroup mentions %q", strings.Trim(h.word, "/-")))
				break
			}
		}
	}
	for _, m := range r.mounts() {
		ro := contains(m.options, "ro")
		switch {
		case m.point == "/proc/sys" && ro:
			c.ProcSysReadOnly = true
		case m.point == "/sys" && ro:
			c.SysReadOnly = true
		}
	}
	if c.ProcSysReadOnly {
		c.Evidence = append(c.Evidence, "/proc/sys is mounted read-only")
		if c.Kind == "" {
			c.Detected, c.Kind = true, "container"
		}
	}
	return nil
}
