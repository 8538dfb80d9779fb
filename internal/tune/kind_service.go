package tune

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"redline/internal/change"
	"redline/internal/trusted"
)

// Services (irqbalance): stopped or started through systemd where the host
// runs it. Without systemd tune can see whether the daemon runs but will
// not guess how your init system manages it: the change is report-only and
// says what to run.

func init() {
	registerKind(change.KindService, &kindOps{
		check: checkService,
		read:  readService,
		write: writeService,
	})
}

// ServiceController reads and sets a service's state: "active" or
// "inactive".
type ServiceController interface {
	State(ctx context.Context, unit string) (string, error)
	Set(ctx context.Context, unit, state string) error
}

func checkService(ctx context.Context, s *System, c change.Change) error {
	if s.Services == nil {
		return refuse("services can only be changed on the live host", nil)
	}
	if err := s.requireRoot(); err != nil {
		return err
	}
	cur, err := s.Services.State(ctx, c.Target)
	if err != nil || change.ServiceState(cur) == c.Value {
		return err
	}
	// A controller that cannot change services says so before anything
	// is journaled.
	if r, ok := s.Services.(interface {
		CanSet(unit, state string) error
	}); ok {
		return r.CanSet(c.Target, c.Value)
	}
	return nil
}

func readService(ctx context.Context, s *System, c change.Change) (string, error) {
	if s.Services == nil {
		return "", refuse("services can only be read on the live host", nil)
	}
	return s.Services.State(ctx, c.Target)
}

func writeService(ctx context.Context, s *System, c change.Change, v string) error {
	return s.Services.Set(ctx, c.Target, change.ServiceState(v))
}

// DetectServices returns systemd control when the host booted with
// systemd (sd_booted: /run/systemd/system exists), else a controller that
// only reports.
func DetectServices() ServiceController {
	if st, err := os.Stat("/run/systemd/system"); err == nil && st.IsDir() {
		return Systemd{}
	}
	return ProcessOnly{Proc: OSFS{Root: "/"}}
}

// Systemd controls units with systemctl.
type Systemd struct{}

// systemctlTimeout bounds every systemctl call: a hung stop must not hang
// the apply.
const systemctlTimeout = 30 * time.Second

// State is `systemctl is-active UNIT`; a unit that is not installed is a
// refusal.
func (Systemd) State(ctx context.Context, unit string) (string, error) {
	out, _ := systemctl(ctx, "is-active", unit)
	state := strings.TrimSpace(out)
	if state == "" {
		return "", fmt.Errorf("systemctl is-active %s gave no answer", unit)
	}
	if state == "inactive" {
		if o, _ := systemctl(ctx, "show", "-p", "LoadState", "--value", unit); strings.TrimSpace(o) == "not-found" {
			return "", refuse(unit+" is not installed", nil)
		}
	}
	return state, nil
}

// Set starts or stops unit (runtime only: the unit stays enabled or
// disabled as it was, so a reboot restores the distribution's choice).
func (Systemd) Set(ctx context.Context, unit, state string) error {
	verb := map[string]string{"active": "start", "inactive": "stop"}[state]
	if out, err := systemctl(ctx, verb, unit); err != nil {
		return fmt.Errorf("systemctl %s %s: %w: %s", verb, unit, err, strings.TrimSpace(out))
	}
	return nil
}

func systemctl(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, systemctlTimeout)
	defer cancel()
	p, err := trusted.Program("systemctl")
	if err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, p, args...).CombinedOutput()
	return string(out), err
}

// ProcessOnly sees services as processes (a running process whose name is
// the unit's) and refuses to change them: without systemd there is no one
// right way to stop and restart a daemon.
type ProcessOnly struct{ Proc FS }

// State is "active" when a process named unit runs.
func (p ProcessOnly) State(_ context.Context, unit string) (string, error) {
	pids, err := findProcesses(p.Proc, unit)
	if err != nil {
		return "", err
	}
	if len(pids) > 0 {
		return "active", nil
	}
	return "inactive", nil
}

// Set refuses, saying what the user can run instead.
func (p ProcessOnly) Set(_ context.Context, unit, state string) error { return p.CanSet(unit, state) }

// CanSet always refuses, with the command the user can run.
func (p ProcessOnly) CanSet(unit, state string) error {
	how := map[string]string{
		"inactive": fmt.Sprintf("stop it with your init system (service %s stop), or kill it; start it again after redline tune rollback", unit),
		"active":   fmt.Sprintf("start it with your init system (service %s start)", unit),
	}[state]
	return refuse("this host does not run systemd, so redline does not "+map[string]string{"inactive": "stop", "active": "start"}[state]+" "+unit+": "+how, nil)
}

// findProcesses returns the pids whose /proc/PID/comm is name.
func findProcesses(fsys FS, name string) ([]string, error) {
	ents, err := fsys.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		comm, err := fsys.ReadFile("/proc/" + e.Name() + "/comm")
		if err == nil && strings.TrimSpace(string(comm)) == name {
			out = append(out, e.Name())
		}
	}
	return out, nil
}
