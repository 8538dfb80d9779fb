package tune

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"redline/internal/change"
)

// The files persist writes (change.KindPersist), redline's own.
const (
	PersistSysctlFile = "/etc/sysctl.d/90-redline.conf"
	PersistBootPlan   = "/etc/redline/boot-plan.yaml"
	PersistBootUnit   = "/etc/systemd/system/redline-boot.service"
	PersistBootLink   = "/etc/systemd/system/multi-user.target.wants/redline-boot.service"
)

// PersistOptions say how the boot unit runs redline.
type PersistOptions struct {
	// Binary is redline's absolute path, as the unit runs it.
	Binary string
	// StateDir is the journal the boot apply writes (its changes are
	// rolled back as any apply's).
	StateDir string
}

// Persistence is how a plan survives a reboot: Changes (persist-file
// changes, journaled like any other, so rollback removes them) and what
// could not be made persistent, with why.
type Persistence struct {
	Changes []change.Change
	// Rewrite is set when the plan has Redis settings: they persist
	// through CONFIG REWRITE to the server's config file, run after the
	// apply and again after its rollback.
	Rewrite bool
	Skipped []string
}

// Persist says how p's changes persist: sysctls in a sysctl.d drop-in
// (loaded at boot by systemd-sysctl, or `sysctl --system`); kernel files
// (IRQ affinity, RPS/XPS, THP, governors, cpuidle) and NIC channels in a
// boot plan that a systemd unit applies with `redline tune apply --boot`;
// Redis settings through CONFIG REWRITE. Thread affinities (a process's)
// and service states do not persist this way and are listed as skipped.
func Persist(p *Plan, o PersistOptions) (*Persistence, error) {
	out := &Persistence{}
	var sysctls []string
	boot := &Plan{Version: PlanVersion, Host: p.Host, Sources: []string{"redline tune persist"}}
	for _, c := range p.Changes {
		switch c.Kind {
		case change.KindSysctl:
			sysctls = append(sysctls, fmt.Sprintf("%s = %s", c.Target, c.Value))
		case change.KindFile, change.KindChannels:
			boot.Changes = append(boot.Changes, c)
		case change.KindRedisConfig:
			out.Rewrite = true
		case change.KindPersist:
		default:
			out.Skipped = append(out.Skipped, fmt.Sprintf("%s %s: a %s does not persist across a reboot this way (it is lost on %s)", c.Kind, c.Target, c.Kind, c.LostOn()))
		}
	}
	const header = "# written by redline tune persist; redline tune rollback removes it\n"
	if len(sysctls) > 0 {
		sort.Strings(sysctls)
		out.Changes = append(out.Changes, change.Change{Kind: change.KindPersist, Target: PersistSysctlFile,
			Value: header + strings.Join(sysctls, "\n"), Why: "the plan's sysctls, loaded at boot by systemd-sysctl"})
	}
	if len(boot.Changes) > 0 {
		if o.Binary == "" {
			return nil, fmt.Errorf("persist: the boot unit needs redline's path")
		}
		var b bytes.Buffer
		if err := boot.EncodeYAML(&b, strings.TrimSuffix(header, "\n"), nil); err != nil {
			return nil, err
		}
		out.Changes = append(out.Changes,
			change.Change{Kind: change.KindPersist, Target: PersistBootPlan, Value: strings.TrimSuffix(b.String(), "\n"),
				Why: "the plan's kernel files, applied at boot"},
			change.Change{Kind: change.KindPersist, Target: PersistBootUnit, Value: bootUnit(o),
				Why: "applies the boot plan at boot"},
			change.Change{Kind: change.KindPersist, Target: PersistBootLink, Value: change.PersistLinkPrefix + PersistBootUnit,
				Why: "enables the boot unit (systemctl enable)"})
	}
	return out, nil
}

func bootUnit(o PersistOptions) string {
	state := ""
	if o.StateDir != "" && o.StateDir != DefaultStateDir {
		state = " --state-dir " + o.StateDir
	}
	return strings.Join([]string{
		"# written by redline tune persist; redline tune rollback removes it",
		"[Unit]",
		"Description=redline: apply the persisted tuning plan at boot",
		"After=network-online.target irqbalance.service",
		"Wants=network-online.target",
		"",
		"[Service]",
		"Type=oneshot",
		"RemainAfterExit=yes",
		"ExecStart=" + o.Binary + " tune apply --boot " + PersistBootPlan + state,
		"",
		"[Install]",
		"WantedBy=multi-user.target",
	}, "\n")
}

// WithPersistence is p with its persistence added: one plan, applied as
// one journal session, so one rollback undoes the values and the files.
func WithPersistence(p *Plan, per *Persistence) *Plan {
	q := *p
	q.Changes = append(append([]change.Change{}, p.Changes...), per.Changes...)
	if per.Rewrite && q.Redis != nil {
		r := *q.Redis
		r.Rewrite = true
		q.Redis = &r
	}
	return &q
}

// AfterReboot splits the journaled changes still in place by whether a
// reboot brings them back: a sysctl the journal's drop-in sets, a kernel
// file or channel count in its boot plan (applied at boot by the unit), a
// Redis setting of a session that ran CONFIG REWRITE, and the persist
// files themselves. The rest are lost (each one's LostOn says to what).
func AfterReboot(rep *StatusReport) (back, lost []StatusLine) {
	sysctls, bootFiles := map[string]bool{}, map[string]bool{}
	for _, sess := range rep.Sessions {
		for _, l := range sess.Changes {
			if l.Change.Kind != change.KindPersist || l.Status != StatusApplied {
				continue
			}
			switch l.Change.Target {
			case PersistSysctlFile:
				for _, line := range strings.Split(l.Change.Value, "\n") {
					if name, _, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
						sysctls[strings.TrimSpace(name)] = true
					}
				}
			case PersistBootPlan:
				if p, err := ParsePlan([]byte(l.Change.Value), ".yaml"); err == nil {
					for _, c := range p.Changes {
						bootFiles[string(c.Kind)+" "+c.Target] = true
					}
				}
			}
		}
	}
	for _, sess := range rep.Sessions {
		for _, l := range sess.Changes {
			if l.Status != StatusApplied {
				continue
			}
			c := l.Change
			comes := c.Kind == change.KindPersist ||
				(c.Kind == change.KindSysctl && sysctls[c.Target]) ||
				bootFiles[string(c.Kind)+" "+c.Target] ||
				(c.Kind == change.KindRedisConfig && sess.Info.Rewrite)
			if comes {
				back = append(back, l)
			} else {
				lost = append(lost, l)
			}
		}
	}
	return back, lost
}
