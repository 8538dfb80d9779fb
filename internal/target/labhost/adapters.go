// Package labhost is the lab's host over the one server-host API
// (serverhost.Host): its lab.Tuner, lab.Diagnoser and lab.Steerer on this
// machine or a server host over ssh, the lab's lab.ServerHost of a
// target of kind ssh (a redline session there: ssh.go, including how a
// died link's cleanup is learned), and where a scenario's builds are
// made (build.go). internal/cli gives it the command line's options once
// (Options) and prints what it says.
package labhost

import (
	"cmp"
	"context"
	"io"
	"slices"

	"redline/internal/change"
	"redline/internal/doctor"
	"redline/internal/host"
	"redline/internal/lab"
	"redline/internal/labdata"
	"redline/internal/remote"
	"redline/internal/serverhost"
	"redline/internal/target/policy"
	"redline/internal/tune"
)

// Options are how a lab opens its host: from the command line, once.
type Options struct {
	// StateDir is the tune journal's directory ("" the default; over
	// ssh the session's default there).
	StateDir string
	// SSHConfig is --ssh-config for a target of kind ssh; Version the
	// redline a session there must run.
	SSHConfig string
	Version   string
	// Notify says a line as it happens (the link's notices, a build on
	// the server host); BuildProgress takes a local build's output.
	Notify        func(string)
	BuildProgress io.Writer
	// Cleanups says what earlier sessions on a server host restored and
	// stopped by themselves, as its hello reported it.
	Cleanups func(host string, cls []remote.Cleanup)
	// Closed ends this machine's host when the lab is done (the caller
	// says what it still had to undo).
	Closed func(serverhost.Host)
}

func (o Options) notify(msg string) {
	if o.Notify != nil {
		o.Notify(msg)
	}
}

// Host is the host the lab's target runs on, as the lab acts on it:
// this machine's tuner, doctor and steerer, or the way to open a session
// on a target's server host (which brings its own three).
type Host struct {
	Tuner      lab.Tuner
	Doctor     lab.Diagnoser
	Steerer    lab.Steerer
	ServerHost lab.DialServerHost
	Close      func()
}

// Open opens the host the lab's target runs on: the one place redline
// lab tells this machine from a server host over ssh. A target of kind
// ssh is a redline session there (DialSSH), which holds its journal
// directory from its first change on. Any other target runs here, on one
// serverhost.Local for the lab's life, seen from the server's network
// namespace (against a netns target the plan is made, and tune writes
// net.* sysctls and dials Redis, inside it, journaling it, so a later
// redline tune rollback from the host acts in it, or reports it gone);
// when a variant changes the host, that Local holds the journal
// directory from now on, so a second lab tuning this host refuses before
// it starts anything instead of interleaving its journal sessions with
// this one's. The applies are journaled in the state directory, so
// redline tune rollback restores the host even if the lab is killed.
func Open(o Options, sc labdata.Scenario) (*Host, error) {
	if sc.Target.Kind == labdata.KindSSH {
		return &Host{ServerHost: DialSSH(o), Close: func() {}}, nil
	}
	local := serverhost.NewLocal(serverhost.LocalOptions{StateDir: o.StateDir, Holder: "redline lab"})
	if tunes(sc) {
		if err := local.Hold(); err != nil {
			return nil, err
		}
	}
	in := func(env lab.Env) serverhost.Host { return local.InNetNS(env.ServerNetNS, env.ClientNetNS) }
	return &Host{
		Tuner:   &localTuner{hostTuner{host: in, scope: serverhost.Kept}, local},
		Doctor:  hostDoctor{host: in},
		Steerer: hostSteerer{host: in, adopt: true},
		// The lab has rolled back and stopped what it did by then: this
		// releases the hold (and says what it still had to undo).
		Close: func() {
			if o.Closed != nil {
				o.Closed(local)
			}
		},
	}, nil
}

// tunes says whether any variant applies tune changes or steers IRQs (and
// so uses the journal in the state directory).
func tunes(sc labdata.Scenario) bool {
	for _, v := range sc.Variants {
		if v.Tune != nil || (v.Steer != nil && !v.Steer.DryRun) { // steer's moves go through the same journal
			return true
		}
	}
	return false
}

// hostTuner is the lab.Tuner of a server host (this machine, or a
// session's): a variant's plan is composed here (labPlan) over the host's
// snapshot, and applied there behind its journal.
type hostTuner struct {
	host  func(lab.Env) serverhost.Host
	scope serverhost.Scope
	// lost and restored are a remote host's: whether its link died, and
	// what its session then restored by itself.
	lost     func() bool
	restored func(context.Context) ([]labdata.PlanStep, error)
	session  string // the last Apply's journal session
}

// Apply plans spec and applies it, without the host-wide changes when
// env.HostWideOff says the lab refused them.
func (t *hostTuner) Apply(ctx context.Context, spec labdata.TuneSpec, env lab.Env) ([]labdata.PlanStep, error) {
	h := t.host(env)
	plan, err := t.plan(ctx, h, spec, env)
	if err != nil {
		return nil, err
	}
	if env.HostWideOff {
		plan.Changes = slices.DeleteFunc(plan.Changes, func(c change.Change) bool { return policy.HostWide(c, env.ServerNetNS) })
	}
	res, err := h.TuneApply(ctx, plan, labRedis(env), t.scope)
	var steps []labdata.PlanStep
	if res != nil {
		steps, t.session = stepsOf(res.Outcomes), res.Session
	}
	return steps, err
}

// Preview plans spec on the server host without applying it
// (lab.Previewer): the lab lists the host-wide changes before the first.
func (t *hostTuner) Preview(ctx context.Context, spec labdata.TuneSpec, env lab.Env) ([]change.Change, error) {
	plan, err := t.plan(ctx, t.host(env), spec, env)
	if err != nil {
		return nil, err
	}
	return plan.Changes, nil
}

// plan is labPlan over a snapshot of h.
func (t *hostTuner) plan(ctx context.Context, h serverhost.Host, spec labdata.TuneSpec, env lab.Env) (*tune.Plan, error) {
	return labPlan(spec, env, func(pid int) (*host.Snapshot, error) {
		a := serverhost.SnapshotArgs{}
		if pid > 0 {
			a.PIDs = []int{pid}
		}
		return h.Snapshot(ctx, a)
	})
}

// labRedis is the lab's server, with its password.
func labRedis(env lab.Env) *serverhost.RedisTarget {
	return &serverhost.RedisTarget{Addr: env.RedisAddr, User: env.RedisUser, Password: env.RedisPassword}
}

// labPlan composes a variant's plan (tune.Compose): its plan file, the
// doctor's safe fixes with their notes, its tune profiles planned over a
// snapshot of the server's host (snapshot reads it, with the server's
// process). On a cluster target the Redis settings go to every node
// (env.Nodes).
func labPlan(spec labdata.TuneSpec, env lab.Env, snapshot func(pid int) (*host.Snapshot, error)) (*tune.Plan, error) {
	redis := &tune.PlanRedis{Addr: env.RedisAddr, User: env.RedisUser}
	var src tune.Sources
	if spec.Plan != "" {
		p, err := tune.ReadPlanFile(spec.Plan)
		if err != nil {
			return nil, err
		}
		src.Plans = append(src.Plans, p)
	}
	if f := env.SafeFixes; spec.Doctor && (len(f.Changes) > 0 || len(f.Notes) > 0) {
		src.Fixes, src.FixNotes, src.FixesGiven = f.Changes, f.Notes, true
	}
	src.Profiles = spec.Profiles
	src.Input = tune.PlanInput{PID: env.ServerPID, Redis: redis}
	src.Snapshot = func() (*host.Snapshot, error) { return snapshot(env.ServerPID) }
	plan, err := tune.Compose(src)
	if err != nil {
		return nil, err
	}
	plan.Redis = redis
	plan.ForNodes(env.Nodes) // a cluster: every node, or none
	return plan, plan.Validate()
}

// Rollback restores what the last Apply changed (nothing when it applied
// nothing); when a remote host's link has died, its session restored
// them by itself, and a new one tells how.
func (t *hostTuner) Rollback(ctx context.Context, env lab.Env) ([]labdata.PlanStep, error) {
	session := t.session
	t.session = ""
	if session == "" {
		return nil, nil
	}
	if t.lost != nil && t.lost() {
		return t.restored(ctx)
	}
	res, err := t.host(env).TuneRollback(ctx, serverhost.TuneRollbackArgs{Session: session, RedisPassword: env.RedisPassword})
	if res == nil && t.lost != nil && t.lost() {
		return t.restored(ctx)
	}
	var steps []labdata.PlanStep
	if res != nil {
		steps = stepsOf(res.Outcomes)
	}
	return steps, err
}

// localTuner is hostTuner on this machine, which also gives a netns
// target's namespace its starting sysctls (lab.NetStarter).
type localTuner struct {
	hostTuner
	local *serverhost.Local
}

func stepsOf(outs []tune.Outcome) []labdata.PlanStep { return serverhost.StepsOf(outs) }

// hostDoctor is the lab.Diagnoser of a server host (this machine, or a
// session's). Its safe fixes are the doctor's plan under
// doctor.UnattendedPlan.
type hostDoctor struct{ host func(lab.Env) serverhost.Host }

// Diagnose runs every rule against the host and the server.
func (d hostDoctor) Diagnose(ctx context.Context, env lab.Env) ([]labdata.Finding, lab.Fixes, error) {
	rep, err := d.host(env).Doctor(ctx, serverhost.DoctorArgs{Pid: env.ServerPID, Redis: labRedis(env)})
	if err != nil {
		return nil, lab.Fixes{}, err
	}
	f, fixes := labFindings(rep, env.RedisAddr)
	return f, fixes, nil
}

// labFindings are a doctor report's findings as the lab records them,
// and the fixes it applies unattended (doctor.UnattendedPlan). For a
// cluster each finding names its node, and a node doctor could not read
// is recorded as a finding of its own (cluster-node-unread).
func labFindings(rep *doctor.Report, addr string) ([]labdata.Finding, lab.Fixes) {
	var findings []labdata.Finding
	labels := map[string]string{}
	for _, n := range rep.Nodes {
		labels[n.Addr] = n.Label()
		if n.Error != "" {
			findings = append(findings, labdata.Finding{ID: "cluster-node-unread", Severity: "high", Node: n.Label(),
				Title: "a cluster node could not be read: its checks did not run", Message: n.Error})
		}
	}
	for _, f := range rep.Fired(doctor.Low) {
		lf := findingOf(f, cmp.Or(f.Node, addr))
		lf.Node = labels[f.Node]
		findings = append(findings, lf)
	}
	dp := rep.Plan(doctor.UnattendedPlan)
	return findings, lab.Fixes{Changes: dp.Changes, Notes: dp.Notes}
}

func findingOf(f doctor.Finding, addr string) labdata.Finding {
	out := labdata.Finding{ID: f.ID, Severity: f.Severity.String(), Title: f.Title, Message: f.Message}
	for _, e := range f.Evidence {
		// as doctor prints it: an empty value is "", not a blank
		out.Evidence = append(out.Evidence, e.Text())
	}
	if f.Fix != nil {
		for _, c := range f.Fix.Changes {
			out.Fix = append(out.Fix, doctor.Command(c, addr))
		}
		out.Fix = append(out.Fix, f.Fix.Advice...)
	}
	return out
}

// StartNetNS gives a netns target's namespace its starting sysctls
// through tune (lab.NetStarter), journaled in the lab's state directory.
func (t *localTuner) StartNetNS(ctx context.Context, ns string, sysctls map[string]string) ([]labdata.PlanStep, func(context.Context) error, error) {
	outs, undo, err := t.local.StartNetNS(ctx, ns, sysctls)
	return stepsOf(outs), undo, err
}
