package cli

import (
	"cmp"
	"context"
	"fmt"

	"redline/internal/change"
	"redline/internal/doctor"
	_ "redline/internal/doctor/rules" // registers the doctor's rules
	"redline/internal/host"
	"redline/internal/lab"
	"redline/internal/labdata"
	"redline/internal/netns"
	"redline/internal/redisadmin"
	"redline/internal/tune"
)

// labTuning returns the lab's tuner and doctor on the live host.
func labTuning(stateDir string) (lab.Tuner, lab.Diagnoser) {
	return &hostTuner{StateDir: stateDir}, hostDoctor{}
}

// hostTuner is the lab.Tuner built on internal/tune: a variant's plan comes
// from tune profiles, a plan file and the doctor's safe fixes, and is
// applied behind tune's on-disk journal, so "redline tune rollback"
// restores the host even if the lab is killed. Against a netns target the
// plan is made inside the server's namespace, whose net.* sysctls are its
// own, and tune is told the namespace (System.NetNS): it writes net.*
// sysctls and dials Redis there and journals the namespace, so a later
// "redline tune rollback" from the host acts in it, or reports it gone.
type hostTuner struct {
	StateDir string
	session  string // the last Apply's journal session
}

// Apply plans and applies spec.
func (t *hostTuner) Apply(ctx context.Context, spec labdata.TuneSpec, env lab.Env) ([]labdata.PlanStep, error) {
	var plan *tune.Plan
	err := netns.Do(env.ServerNetNS, func() (err error) {
		plan, err = t.plan(spec, env)
		return err
	})
	if err != nil {
		return nil, err
	}
	sys := tune.LiveSystem()
	sys.NetNS = env.ServerNetNS
	sys.Redis = tune.RedisOptions{Addr: env.RedisAddr, User: env.RedisUser, Password: env.RedisPassword}
	defer sys.Close()
	res, err := tune.Apply(ctx, sys, plan, tune.ApplyOptions{StateDir: t.StateDir})
	var steps []labdata.PlanStep
	if res != nil {
		steps, t.session = stepsOf(res.Outcomes), res.Session
	}
	return steps, err
}

// plan gathers the variant's changes.
func (t *hostTuner) plan(spec labdata.TuneSpec, env lab.Env) (*tune.Plan, error) {
	return labPlan(spec, env, labSnapshot)
}

// labPlan gathers a variant's changes: its tune profiles planned over a
// snapshot of the server's host (snapshot reads it, with the server's
// process), its plan file and the doctor's safe fixes. The local and the
// ssh tuner both plan through it. On a cluster target the Redis settings
// go to every node (env.Nodes).
func labPlan(spec labdata.TuneSpec, env lab.Env, snapshot func(pid int) (*host.Snapshot, error)) (*tune.Plan, error) {
	redis := &tune.PlanRedis{Addr: env.RedisAddr, User: env.RedisUser}
	plan := &tune.Plan{Version: tune.PlanVersion, Redis: redis}
	if len(spec.Profiles) > 0 {
		snap, err := snapshot(env.ServerPID)
		if err != nil {
			return nil, err
		}
		p, err := tune.PlanProfiles(tune.PlanInput{Host: snap, PID: env.ServerPID, Redis: redis}, spec.Profiles...)
		if err != nil {
			return nil, err
		}
		plan.Merge(p)
	}
	if spec.Plan != "" {
		p, err := tune.ReadPlanFile(spec.Plan)
		if err != nil {
			return nil, err
		}
		plan.Merge(p)
	}
	if spec.Doctor && len(env.SafeFixes) > 0 {
		plan.Merge(tune.FromChanges(env.SafeFixes, "doctor"))
	}
	plan.Redis = redis
	plan.ForNodes(env.Nodes) // a cluster: every node, or none
	return plan, plan.Validate()
}

// Rollback restores what the last Apply changed, in the namespace the
// journal names.
func (t *hostTuner) Rollback(ctx context.Context, env lab.Env) ([]labdata.PlanStep, error) {
	o := tune.RollbackOptions{StateDir: t.StateDir, RedisPassword: env.RedisPassword, Session: t.session}
	if t.session == "" {
		o.Last = true
	}
	res, err := tune.Rollback(ctx, o)
	t.session = ""
	var steps []labdata.PlanStep
	if res != nil {
		steps = stepsOf(res.Outcomes)
	}
	return steps, err
}

func stepsOf(outs []tune.Outcome) []labdata.PlanStep {
	steps := make([]labdata.PlanStep, 0, len(outs))
	for _, o := range outs {
		steps = append(steps, labdata.PlanStep{Change: o.Change, Old: o.Old, Status: string(o.Status), Note: o.Reason})
	}
	return steps
}

func labSnapshot(pid int) (*host.Snapshot, error) {
	fs, err := host.NewFS("/")
	if err != nil {
		return nil, err
	}
	opts := host.Options{}
	if pid > 0 {
		opts.PIDs = []int{pid}
	}
	return host.Read(fs, opts)
}

// hostDoctor is the lab.Diagnoser built on internal/doctor. Its safe fixes
// are the doctor's plan under doctor.UnattendedPlan.
type hostDoctor struct{}

// Diagnose runs every rule against the host and the server.
func (hostDoctor) Diagnose(ctx context.Context, env lab.Env) ([]labdata.Finding, []change.Change, error) {
	var findings []labdata.Finding
	var fixes []change.Change
	err := netns.Do(env.ServerNetNS, func() error {
		facts, err := doctor.Gather(ctx, doctor.GatherOptions{Root: "/", Pid: env.ServerPID,
			Redis: &redisadmin.Options{Addr: env.RedisAddr, Username: env.RedisUser, Password: env.RedisPassword}})
		if err != nil {
			return err
		}
		rep, err := doctor.Run(ctx, facts, doctor.Options{})
		if err != nil {
			return err
		}
		findings, fixes = labFindings(rep, env.RedisAddr)
		return nil
	})
	return findings, fixes, err
}

// labFindings are a doctor report's findings as the lab records them,
// and the fixes it applies unattended (doctor.UnattendedPlan). For a
// cluster each finding names its node, and a node doctor could not read
// is recorded as a finding of its own (cluster-node-unread).
func labFindings(rep *doctor.Report, addr string) ([]labdata.Finding, []change.Change) {
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
	return findings, rep.Plan(doctor.UnattendedPlan).Changes
}

func findingOf(f doctor.Finding, addr string) labdata.Finding {
	out := labdata.Finding{ID: f.ID, Severity: f.Severity.String(), Title: f.Title, Message: f.Message}
	for _, e := range f.Evidence {
		ev := fmt.Sprintf("%s = %s", e.Source, e.Value)
		if e.Note != "" {
			ev += " (" + e.Note + ")"
		}
		out.Evidence = append(out.Evidence, ev)
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
func (t *hostTuner) StartNetNS(ctx context.Context, ns string, sysctls map[string]string) ([]labdata.PlanStep, func(context.Context) error, error) {
	outs, undo, err := tune.StartNetNS(ctx, ns, sysctls, t.StateDir)
	return stepsOf(outs), undo, err
}
