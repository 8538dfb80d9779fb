package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"redline/internal/change"
	"redline/internal/doctor"
	"redline/internal/host"
	"redline/internal/redisadmin"
	"redline/internal/remote"
	"redline/internal/tune"
)

type tunePlanOptions struct {
	tuneOptions
	profiles       []string
	fromDoctor     bool
	minSeverity    string
	nic            string
	nicNode        int
	pid            int
	keepIrqbalance bool
	rewrite        bool
	out            string
	// rc is the server host's session (--ssh): the snapshot, the doctor
	// and the preview come from there.
	rc *remote.Client
}

func newTunePlanCmd(s *streams) *cobra.Command {
	o := &tunePlanOptions{}
	cmd := &cobra.Command{
		Use:   "plan [FILE...]",
		Short: "Make a plan from profiles, doctor findings or files, and show what it would change",
		Long: `plan builds a plan from --profile (` + strings.Join(tune.ProfileNames(), ", ") + `),
from --doctor (runs redline doctor now and takes the fixes of its findings), and from
FILEs: plans, lists of changes, or saved 'redline doctor --json' reports. When two
sources set the same thing the first wins. It prints a diff of the live values
(target, old -> new, why, rule) and, with -o, writes the plan for you to edit and
apply. plan never changes anything.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("nic-node") {
				o.nicNode = -1
			}
			return runTunePlan(cmd.Context(), s, o, args)
		},
	}
	o.hostFlags(cmd)
	o.remote.flags(cmd)
	f := cmd.Flags()
	f.StringSliceVar(&o.profiles, "profile", nil, "profiles to plan (comma-separated): "+strings.Join(tune.ProfileNames(), ", "))
	f.BoolVar(&o.fromDoctor, "doctor", false, "run redline doctor now and plan the fixes of what it finds")
	f.StringVar(&o.minSeverity, "min-severity", "low", "take doctor fixes of findings at or above: info, low, medium, high")
	f.StringVar(&o.nic, "nic", "", "the NIC that carries Redis traffic (default: the only physical NIC that is up)")
	f.IntVar(&o.nicNode, "nic-node", -1, "the NIC's NUMA node, when it reports -1 on a multi-node machine")
	f.IntVar(&o.pid, "pid", 0, "the Redis server's pid (default: the only redis-server running)")
	f.BoolVar(&o.keepIrqbalance, "keep-irqbalance", false, "do not stop a running irqbalance; report that it will undo IRQ pinning")
	f.BoolVar(&o.rewrite, "rewrite", false, "persist redis-config changes with CONFIG REWRITE (and rewrite again on rollback)")
	f.StringVarP(&o.out, "output", "o", "", "write the plan to this file (.yaml, .yml or .json; - for YAML on stdout)")
	f.BoolVar(&o.json, "json", false, "print the diff as JSON")
	return cmd
}

func runTunePlan(ctx context.Context, s *streams, o *tunePlanOptions, files []string) error {
	if err := o.checkRoot(); err != nil {
		return err
	}
	if len(files) == 0 && len(o.profiles) == 0 && !o.fromDoctor {
		return usageError("redline tune plan: nothing to plan from: give --profile, --doctor or a FILE (see --help)")
	}
	if o.remote.set() {
		if o.root != "/" && o.root != "" {
			return usageError("redline tune plan: --ssh plans for the live server host; --root is for this machine")
		}
		c, err := o.remote.dial(ctx, s, "tune plan", tune.DefaultStateDir)
		if err != nil {
			return err
		}
		defer hangUp(c)
		o.rc = c
	}
	p, err := buildTunePlan(ctx, s, o, files)
	if err != nil {
		return exitCode(ExitError, "redline tune plan: "+err.Error())
	}
	previews, warnings, err := o.preview(ctx, p)
	if err != nil {
		return exitCode(ExitError, "redline tune plan: "+err.Error())
	}
	if o.out != "" {
		if err := tuneWritePlanFile(s, o.out, p, previews); err != nil {
			return exitCode(ExitError, "redline tune plan: "+err.Error())
		}
		if o.out == "-" {
			return nil
		}
	}
	if o.json {
		return tuneWriteJSON(s.out, struct {
			Plan    *tune.Plan     `json:"plan"`
			Preview []tune.Outcome `json:"preview"`
		}{p, previews})
	}
	tunePrintPreview(s.out, p, previews, warnings)
	if o.out != "" {
		fmt.Fprintf(s.out, "\nplan written to %s; apply it with: redline tune apply %s --yes\n", o.out, o.out)
	}
	return nil
}

// buildTunePlan merges the sources in the order: files, doctor, profiles.
func buildTunePlan(ctx context.Context, s *streams, o *tunePlanOptions, files []string) (*tune.Plan, error) {
	plan := &tune.Plan{Version: tune.PlanVersion}
	for _, f := range files {
		p, err := readTunePlanSource(f, o.minSeverity)
		if err != nil {
			return nil, err
		}
		plan.Merge(p)
	}
	if o.fromDoctor {
		p, err := tunePlanFromDoctor(ctx, s, o)
		if err != nil {
			return nil, err
		}
		plan.Merge(p)
	}
	if len(o.profiles) > 0 {
		p, err := tunePlanProfiles(ctx, o)
		if err != nil {
			return nil, err
		}
		plan.Merge(p)
	}
	o.redisTarget(plan)
	if err := o.clusterNodes(ctx, plan); err != nil {
		return nil, err
	}
	return plan, plan.Validate()
}

// clusterNodes sends the plan's node-less Redis settings to every node
// when --redis is a node of a Redis Cluster: a cluster tuned on one node
// is a cluster half-tuned. Through --ssh the plan stays on the one server.
func (o *tunePlanOptions) clusterNodes(ctx context.Context, p *tune.Plan) error {
	if o.rc != nil || o.redis == "" || !slices.ContainsFunc(p.Changes, func(c change.Change) bool {
		return c.Kind == change.KindRedisConfig && c.Node == ""
	}) {
		return nil
	}
	r := tuneRedisOptions(o.redis, o.user)
	r.Password = o.password
	nodes, err := tune.ClusterNodes(ctx, r)
	if err != nil || len(nodes) == 0 {
		return err
	}
	p.ForNodes(nodes)
	p.Notes = append(p.Notes, fmt.Sprintf("%s is a Redis Cluster node: its Redis settings are planned for each of its %d nodes", o.redis, len(nodes)))
	return nil
}

// redisTarget sets the plan's Redis server from --redis, and --rewrite.
func (o *tunePlanOptions) redisTarget(p *tune.Plan) {
	if o.redis != "" && (p.Redis != nil || tuneHasRedisChange(p)) {
		r := tuneRedisOptions(o.redis, o.user)
		p.Redis = &tune.PlanRedis{Network: r.Network, Addr: r.Addr, User: r.User}
	}
	if p.Redis != nil {
		p.Redis.Rewrite = p.Redis.Rewrite || o.rewrite
	}
}

func tuneHasRedisChange(p *tune.Plan) bool {
	for _, c := range p.Changes {
		if c.Kind == change.KindRedisConfig {
			return true
		}
	}
	return false
}

// preview is what applying p would do, here or on the server host.
func (o *tunePlanOptions) preview(ctx context.Context, p *tune.Plan) ([]tune.Outcome, []string, error) {
	if o.rc != nil {
		raw, err := json.Marshal(p)
		if err != nil {
			return nil, nil, err
		}
		var pre remote.TunePreviewResult
		err = callRemote(ctx, o.rc, 0, remote.OpTunePreview, remote.TuneApplyArgs{Plan: raw, Redis: remoteRedis(&o.tuneOptions, p)}, &pre)
		return pre.Outcomes, pre.Warnings, err
	}
	sys := o.system()
	defer sys.Close()
	previews, err := tune.Preview(ctx, sys, p)
	return previews, tune.Warnings(sys, p), err
}

// snapshot reads the host the plan is for (with the server's process).
func (o *tunePlanOptions) snapshot(ctx context.Context) (*host.Snapshot, error) {
	var pids []int
	if o.pid != 0 {
		pids = []int{o.pid}
	}
	if o.rc != nil {
		var snap host.Snapshot
		err := callRemote(ctx, o.rc, 0, remote.OpSnapshot, remote.SnapshotArgs{PIDs: pids}, &snap)
		return &snap, err
	}
	fsys, err := host.NewFS(o.root)
	if err != nil {
		return nil, err
	}
	return host.Read(fsys, host.Options{PIDs: pids})
}

func tunePlanProfiles(ctx context.Context, o *tunePlanOptions) (*tune.Plan, error) {
	snap, err := o.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	in := tune.PlanInput{Host: snap, NIC: o.nic, PID: o.pid, KeepIrqbalance: o.keepIrqbalance}
	if o.nicNode >= 0 {
		in.NICNode = &o.nicNode
	}
	if o.redis != "" {
		r := tuneRedisOptions(o.redis, o.user)
		in.Redis = &tune.PlanRedis{Network: r.Network, Addr: r.Addr, User: r.User}
	}
	p, err := tune.PlanProfiles(in, o.profiles...)
	if err != nil {
		return nil, err
	}
	if snap.Container.Detected {
		p.Notes = append(p.Notes, fmt.Sprintf("running in a container (%s): files mounted read-only will be refused, report-only", snap.Container.Kind))
	}
	return p, nil
}

// tunePlanFromDoctor runs doctor in-process and plans from its report with
// the same function as a saved report.
func tunePlanFromDoctor(ctx context.Context, s *streams, o *tunePlanOptions) (*tune.Plan, error) {
	if o.rc != nil {
		return tunePlanFromRemoteDoctor(ctx, s, o)
	}
	g := doctor.GatherOptions{Root: o.root, Pid: o.pid, Iface: o.nic}
	if o.redis != "" && o.root == "/" {
		r := tuneRedisOptions(o.redis, o.user)
		g.Redis = &redisadmin.Options{Addr: r.Addr, Network: r.Network, Username: o.user, Password: o.password}
	}
	facts, err := doctor.Gather(ctx, g)
	if err != nil {
		return nil, fmt.Errorf("doctor: %w", err)
	}
	rep, err := doctor.Run(ctx, facts, doctor.Options{})
	if err != nil {
		return nil, fmt.Errorf("doctor: %w", err)
	}
	if g.Redis == nil {
		fmt.Fprintln(s.err, "redline tune plan: --doctor without --redis checks the host only")
	}
	return tunePlanOfReport(rep, o.minSeverity)
}

// tunePlanFromRemoteDoctor runs the doctor on the server host and plans
// from its report as from a saved one.
func tunePlanFromRemoteDoctor(ctx context.Context, s *streams, o *tunePlanOptions) (*tune.Plan, error) {
	args := remote.DoctorArgs{Pid: o.pid, Iface: o.nic}
	if o.redis != "" {
		r := tuneRedisOptions(o.redis, o.user)
		args.Redis = &remote.RedisTarget{Network: r.Network, Addr: r.Addr, User: r.User, Password: o.password}
	} else {
		fmt.Fprintln(s.err, "redline tune plan: --doctor without --redis checks the host only")
	}
	var raw json.RawMessage
	if err := callRemote(ctx, o.rc, 0, remote.OpDoctor, args, &raw); err != nil {
		return nil, fmt.Errorf("doctor: %w", err)
	}
	rep, err := doctor.ReadReport(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("doctor: %w", err)
	}
	return tunePlanOfReport(rep, o.minSeverity)
}

// readTunePlanSource reads a FILE given to tune plan: a saved doctor
// report, a plan, or a list of changes.
func readTunePlanSource(path, minSeverity string) (*tune.Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p *tune.Plan
	if doctor.IsReportJSON(b) {
		var rep *doctor.Report
		if rep, err = doctor.ReadReport(bytes.NewReader(b)); err == nil {
			p, err = tunePlanOfReport(rep, minSeverity)
		}
	} else {
		p, err = tune.ParseSource(b, filepath.Ext(path))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(p.Sources) == 0 {
		p.Sources = []string{filepath.Base(path)}
	}
	return p, nil
}

// tunePlanOfReport is the plan of a doctor report under
// doctor.ReviewedPlan: the user reads it before applying it.
func tunePlanOfReport(rep *doctor.Report, minSeverity string) (*tune.Plan, error) {
	min, err := doctor.ParseSeverity(minSeverity)
	if err != nil {
		return nil, err
	}
	dp := rep.Plan(doctor.ReviewedPlan(min))
	p := tune.FromChanges(dp.Changes, "doctor")
	p.Notes = dp.Notes
	if dp.Redis != "" {
		p.Redis = &tune.PlanRedis{Addr: dp.Redis}
	}
	return p, p.Validate()
}

// tuneWritePlanFile writes the plan as YAML (with the live values as comments)
// or JSON, by the file's extension.
func tuneWritePlanFile(s *streams, path string, p *tune.Plan, previews []tune.Outcome) error {
	comments := map[int]string{}
	for i, pv := range previews {
		comments[i] = "now: " + pv.Change.Show(pv.Old)
		if pv.Status == tune.StatusRefused {
			comments[i] += " (refused here: " + pv.Reason + ")"
		}
	}
	var buf bytes.Buffer
	var err error
	if strings.EqualFold(filepath.Ext(path), ".json") {
		err = p.EncodeJSON(&buf)
	} else {
		err = p.EncodeYAML(&buf, "redline tune plan: edit freely, then: redline tune apply FILE --yes", comments)
	}
	if err != nil {
		return err
	}
	if path == "-" {
		_, err = s.out.Write(buf.Bytes())
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
