package host

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// irqbalance runs as a process named irqbalance. Its settings are shell
// assignments in /etc/default/irqbalance (Debian: IRQBALANCE_ARGS) or
// /etc/sysconfig/irqbalance (Red Hat: IRQBALANCE_ARGS or OPTIONS):
//
//	IRQBALANCE_BANNED_CPULIST=0-3,8
//	IRQBALANCE_BANNED_CPUS=0000000f     (deprecated hex form)
//	IRQBALANCE_ARGS="--banirq=45 --banirq=46"
//
// and systemd enables it with
// /etc/systemd/system/multi-user.target.wants/irqbalance.service.

// IrqbalanceConfigPaths are where irqbalance's environment file is looked
// for, in order.
var IrqbalanceConfigPaths = []string{"/etc/default/irqbalance", "/etc/sysconfig/irqbalance"}

func readIrqbalance(r *reader) error {
	ib := &r.snap.Irqbalance
	ib.ProcessesSeen = len(r.processes())
	for _, p := range r.processes() {
		if p.comm == "irqbalance" {
			ib.Running = true
			ib.PIDs = append(ib.PIDs, p.pid)
		}
	}
	ib.EnabledAtBoot = r.fs.Exists("/etc/systemd/system/multi-user.target.wants/irqbalance.service")
	for _, path := range IrqbalanceConfigPaths {
		data, ok := r.file(path)
		if !ok {
			continue
		}
		ib.ConfigPath = path
		ib.Config = parseEnvFile(data)
		applyIrqbalanceConfig(r, ib)
		break
	}
	return nil
}

func applyIrqbalanceConfig(r *reader, ib *Irqbalance) {
	if v := ib.Config["IRQBALANCE_BANNED_CPULIST"]; v != "" {
		if set, err := ParseCPUList(v); err == nil {
			ib.BannedCPUs = &set
		} else {
			r.fail(&ParseError{Path: ib.ConfigPath, Err: err})
		}
	} else if v := ib.Config["IRQBALANCE_BANNED_CPUS"]; v != "" {
		if set, err := ParseCPUMask(v); err == nil {
			ib.BannedCPUs = &set
		} else {
			r.fail(&ParseError{Path: ib.ConfigPath, Err: err})
		}
	}
	ib.Args = ib.Config["IRQBALANCE_ARGS"]
	if ib.Args == "" {
		ib.Args = ib.Config["OPTIONS"]
	}
	ib.BannedIRQs = parseBanIRQ(ib.Args)
}

// parseEnvFile reads KEY=VALUE lines with optional quotes and "export",
// skipping comments, as systemd's EnvironmentFile= does.
func parseEnvFile(data []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		out[strings.TrimSpace(k)] = unquote(strings.TrimSpace(v))
	}
	return out
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	if i := strings.Index(v, " #"); i >= 0 { // a trailing comment
		v = strings.TrimSpace(v[:i])
	}
	return v
}

// parseBanIRQ finds "--banirq=N", "--banirq N" and "-i N" in irqbalance's
// arguments.
func parseBanIRQ(args string) []int {
	var out []int
	f := strings.Fields(args)
	for i := 0; i < len(f); i++ {
		val := ""
		switch {
		case strings.HasPrefix(f[i], "--banirq="):
			val = strings.TrimPrefix(f[i], "--banirq=")
		case (f[i] == "--banirq" || f[i] == "-i") && i+1 < len(f):
			i++
			val = f[i]
		}
		if n, err := strconv.Atoi(val); err == nil {
			out = append(out, n)
		}
	}
	return out
}
