package host

import (
	"bufio"
	"bytes"
	"strings"
)

// /proc/cpuinfo, first processor block, on x86:
//
//	vendor_id	: GenuineIntel
//	model name	: Intel(R) Xeon(R) Processor
//	flags		: fpu vme ... hypervisor ...
//
// and on arm64 (no model name; the part number names the core):
//
//	Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma dcpop asimddp asimdfhm
//	CPU implementer	: 0x48
//	CPU part	: 0xd01

// cpuInfo is what the first processor block of /proc/cpuinfo says.
type cpuInfo struct {
	vendor, model, implementer, part string
	hypervisor                       bool
	arch                             string // guessed from the fields present
}

// armParts names arm64 cores by implementer and part number.
var armParts = map[string]string{
	"0x48/0xd01": "HiSilicon Kunpeng 920 (TaiShan v110)",
	"0x48/0xd02": "HiSilicon Kunpeng 930 (TaiShan v120)",
	"0x41/0xd0c": "Arm Neoverse N1",
	"0x41/0xd40": "Arm Neoverse V1",
	"0x41/0xd49": "Arm Neoverse N2",
	"0x41/0xd4f": "Arm Neoverse V2",
	"0x41/0xd08": "Arm Cortex-A72",
	"0xc0/0xac3": "Ampere-1",
}

var armImplementers = map[string]string{
	"0x41": "ARM", "0x48": "HiSilicon", "0xc0": "Ampere", "0x46": "Fujitsu", "0x4e": "NVIDIA", "0x51": "Qualcomm",
}

func readCPUInfo(r *reader) error {
	data, ok := r.file("/proc/cpuinfo")
	if !ok {
		return nil
	}
	ci := parseCPUInfo(data)
	t := &r.snap.CPU
	t.Vendor, t.ModelName = ci.vendor, ci.model
	if r.snap.Kernel.Arch == "" {
		r.snap.Kernel.Arch = ci.arch
	}
	r.hypervisor = ci.hypervisor
	return nil
}

// parseCPUInfo reads the first processor block; the others repeat it.
func parseCPUInfo(data []byte) cpuInfo {
	var ci cpuInfo
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	seen := 0
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if k == "processor" {
			if seen++; seen > 1 {
				break
			}
		}
		switch k {
		case "vendor_id":
			ci.vendor, ci.arch = v, "x86_64"
		case "model name":
			ci.model = v
		case "CPU implementer":
			ci.implementer, ci.arch = v, "aarch64"
		case "CPU part":
			ci.part = v
		case "flags", "Features":
			ci.hypervisor = ci.hypervisor || hasWord(v, "hypervisor")
		}
	}
	if ci.implementer != "" {
		if ci.vendor == "" {
			ci.vendor = armImplementers[ci.implementer]
		}
		if ci.model == "" {
			ci.model = armParts[ci.implementer+"/"+ci.part]
		}
	}
	return ci
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}
