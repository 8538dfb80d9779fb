package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"redline/internal/atomicfile"
	"redline/internal/change"
	"redline/internal/doctor"
	"redline/internal/host"
	"redline/internal/serverhost"
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
	// h is the host planned for (this machine, or --ssh's): the
	// snapshot, the doctor and the preview come from there.
	h serverhost.Host
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
	if err := checkOutputs("tune plan", fileOutput("-o", o.out)); err != nil {
		return err
	}
	h, err := o.remote.openHost(ctx, s, "tune plan", o.local())
	if err != nil {
		return err
	}
	defer closeHost(s, "tune plan", h)
	o.h = h
	p, err := buildTunePlan(ctx, s, o, files)
	if err != nil {
		return exitCode(ExitError, "redline tune plan: "+err.Error())
	}
	previews, warnings, err := o.preview(ctx, s, p)
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

// buildTunePlan composes the sources (tune.Compose: files, doctor,
// profiles, the first to set a thing wins).
func buildTunePlan(ctx context.Context, s *streams, o *tunePlanOptions, files []string) (*tune.Plan, error) {
	var src tune.Sources
	for _, f := range files {
		p, err := readTunePlanSource(f, o.minSeverity)
		if err != nil {
			return nil, err
		}
		src.Plans = append(src.Plans, p)
	}
	if o.fromDoctor {
		if err := tunePlanFromDoctor(ctx, s, o, &src); err != nil {
			return nil, err
		}
	}
	if len(o.profiles) > 0 {
		src.Profiles = o.profiles
		src.Input = tune.PlanInput{NIC: o.nic, PID: o.pid, KeepIrqbalance: o.keepIrqbalance}
		if o.nicNode >= 0 {
			src.Input.NICNode = &o.nicNode
		}
		if o.redis != "" {
			r := tuneRedisOptions(o.redis, o.user)
			src.Input.Redis = &tune.PlanRedis{Network: r.Network, Addr: r.Addr, User: r.User}
		}
		src.Snapshot = func() (*host.Snapshot, error) { return o.snapshot(ctx) }
	}
	plan, err := tune.Compose(src)
	if err != nil {
		return nil, err
	}
	o.redisTarget(plan)
	if err := o.clusterNodes(ctx, plan); err != nil {
		return nil, err
	}
	return plan, plan.Validate()
}

// clusterNodes sends the plan's node-less Redis settings to every node
// when --redis is a node of a Redis Cluster: a cluster tuned on one node
// is a cluster half-tuned. The nodes are listed as the host (this one, or
// --ssh's) reaches them.
func (o *tunePlanOptions) clusterNodes(ctx context.Context, p *tune.Plan) error {
	if o.redis == "" || !slices.ContainsFunc(p.Changes, func(c change.Change) bool {
		return c.Kind == change.KindRedisConfig && c.Node == ""
	}) {
		return nil
	}
	r := tuneRedisOptions(o.redis, o.user)
	nodes, err := o.h.RedisNodes(ctx, serverhost.RedisTarget{Network: r.Network, Addr: r.Addr, User: r.User, Password: o.password})
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

// preview is what applying p would do on the host.
func (o *tunePlanOptions) preview(ctx context.Context, s *streams, p *tune.Plan) ([]tune.Outcome, []string, error) {
	return o.h.TunePreview(ctx, p, o.redisFor(p, s.err))
}

// snapshot reads the host the plan is for (with the server's process).
func (o *tunePlanOptions) snapshot(ctx context.Context) (*host.Snapshot, error) {
	var pids []int
	if o.pid != 0 {
		pids = []int{o.pid}
	}
	return o.h.Snapshot(ctx, serverhost.SnapshotArgs{PIDs: pids})
}

// tunePlanFromDoctor runs the doctor on the host and takes the fixes of
// its report as a saved report's (doctor.ReviewedPlan).
func tunePlanFromDoctor(ctx context.Context, s *streams, o *tunePlanOptions, src *tune.Sources) error {
	min, err := doctor.ParseSeverity(o.minSeverity)
	if err != nil {
		return err
	}
	a := serverhost.DoctorArgs{Pid: o.pid, Iface: o.nic}
	if o.redis != "" {
		r := tuneRedisOptions(o.redis, o.user)
		a.Redis = &serverhost.RedisTarget{Network: r.Network, Addr: r.Addr, User: r.User, Password: o.password}
	}
	rep, err := o.h.Doctor(ctx, a)
	if err != nil {
		return fmt.Errorf("doctor: %w", err)
	}
	if a.Redis == nil {
		fmt.Fprintln(s.err, "redline tune plan: --doctor without --redis checks the host only")
	}
	dp := rep.Plan(doctor.ReviewedPlan(min))
	src.Fixes, src.FixNotes, src.FixRedis, src.FixesGiven = dp.Changes, dp.Notes, dp.Redis, true
	return nil
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
	p, err := tune.Compose(tune.Sources{Fixes: dp.Changes, FixNotes: dp.Notes, FixRedis: dp.Redis, FixesGiven: true})
	if err != nil {
		return nil, err
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
	return atomicfile.Write(path, buf.Bytes(), 0o644)
}
