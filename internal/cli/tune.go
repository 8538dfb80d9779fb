package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"redline/internal/change"
	"redline/internal/doctor"
	"redline/internal/host"
	"redline/internal/redisadmin"
	"redline/internal/tune"
)

// tuneOptions are the flags the tune subcommands share.
type tuneOptions struct {
	stateDir string
	root     string
	redis    string
	user     string
	json     bool
}

func init() { register(newTuneCmd) }

func newTuneCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tune",
		Short: "Plan, apply, verify and roll back host and Redis changes behind a crash-safe journal",
		Long: `tune turns doctor findings and named profiles into a plan: a YAML or JSON file
you can read and edit. apply makes each change behind a journal (the old value is
on disk before anything is written, and every write is read back); rollback
restores from that journal, newest first, even after redline was killed or the
machine rebooted, and leaves alone any value someone else changed since.

  redline tune plan --profile irq-local,rps-xps -o plan.yaml
  redline tune apply plan.yaml --yes
  redline tune status
  redline tune rollback

The journal lives in --state-dir (default ` + tune.DefaultStateDir + `).
Redis passwords come from REDISCLI_AUTH, never from the plan or the journal.
See docs/tune.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newTunePlanCmd(s), newTuneApplyCmd(s), newTuneStatusCmd(s), newTuneVerifyCmd(s), newTuneRollbackCmd(s))
	return cmd
}

func (o *tuneOptions) stateFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.stateDir, "state-dir", tune.DefaultStateDir, "directory of the journal")
}

func (o *tuneOptions) hostFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.root, "root", "/", "host root: / for this machine, or a copy of a fixture tree to rehearse on (kernel write rules simulated)")
	f.StringVar(&o.redis, "redis", "", "Redis server for redis-config changes: HOST:PORT or a unix socket path (overrides the plan's)")
	f.StringVar(&o.user, "user", "", "Redis ACL user (the password comes from REDISCLI_AUTH)")
}

// system is the machine the command works on.
func (o *tuneOptions) system() *tune.System {
	var s *tune.System
	if o.root == "/" || o.root == "" {
		s = tune.LiveSystem()
	} else {
		s = tune.RehearsalSystem(o.root)
	}
	if o.redis != "" {
		s.Redis = tuneRedisOptions(o.redis, o.user)
	}
	s.Redis.Password = os.Getenv("REDISCLI_AUTH")
	return s
}

func tuneRedisOptions(addr, user string) tune.RedisOptions {
	r := tune.RedisOptions{Network: "tcp", Addr: addr, User: user}
	if strings.HasPrefix(addr, "/") {
		r.Network = "unix"
	}
	return r
}

func (o *tuneOptions) checkRoot() error {
	if o.root == "/" || o.root == "" {
		return nil
	}
	if st, err := os.Stat(o.root); err != nil || !st.IsDir() {
		return usageError("redline tune: --root %s is not a directory holding proc/ and sys/", o.root)
	}
	return nil
}

// ---- plan ----

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
	p, err := buildTunePlan(ctx, s, o, files)
	if err != nil {
		return exitCode(ExitError, "redline tune plan: "+err.Error())
	}
	sys := o.system()
	defer sys.Close()
	previews, err := tune.Preview(ctx, sys, p)
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
	tunePrintPreview(s.out, p, previews, tune.Warnings(sys, p))
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
		p, err := tunePlanProfiles(o)
		if err != nil {
			return nil, err
		}
		plan.Merge(p)
	}
	o.redisTarget(plan)
	return plan, plan.Validate()
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

func tunePlanProfiles(o *tunePlanOptions) (*tune.Plan, error) {
	fsys, err := host.NewFS(o.root)
	if err != nil {
		return nil, err
	}
	hopts := host.Options{}
	if o.pid != 0 {
		hopts.PIDs = []int{o.pid}
	}
	snap, err := host.Read(fsys, hopts)
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
	g := doctor.GatherOptions{Root: o.root, Pid: o.pid, Iface: o.nic}
	if o.redis != "" && o.root == "/" {
		r := tuneRedisOptions(o.redis, o.user)
		g.Redis = &redisadmin.Options{Addr: r.Addr, Network: r.Network, Username: o.user, Password: os.Getenv("REDISCLI_AUTH")}
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

// ---- apply ----

type tuneApplyOptions struct {
	tuneOptions
	yes, dryRun bool
}

func newTuneApplyCmd(s *streams) *cobra.Command {
	o := &tuneApplyOptions{}
	cmd := &cobra.Command{
		Use:   "apply PLAN --yes",
		Short: "Apply a plan behind the journal; any failure rolls back what was applied",
		Long: `apply makes the plan's changes in order. Before each write the old value is
journaled and fsynced; after it the value is read back. A change that cannot be
made here (not root, a read-only /proc/sys in a container, a missing file, an IRQ
the kernel will not move) is refused and reported, and the rest go ahead. Any
other failure rolls back everything this apply changed.

Without --yes it shows the plan and changes nothing; --dry-run does the same
without complaining. Exit status: 0 when every change is in place, 1 when one
failed (and was rolled back) or was refused, 2 when apply could not run.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runTuneApply(cmd.Context(), s, o, args[0]) },
	}
	o.stateFlags(cmd)
	o.hostFlags(cmd)
	cmd.Flags().BoolVar(&o.yes, "yes", false, "really apply")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "show what would change and stop")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the result as JSON")
	return cmd
}

func runTuneApply(ctx context.Context, s *streams, o *tuneApplyOptions, path string) error {
	if err := o.checkRoot(); err != nil {
		return err
	}
	p, err := tune.ReadPlanFile(path)
	if err != nil {
		return exitCode(ExitError, "redline tune apply: "+err.Error())
	}
	if h, _ := os.Hostname(); p.Host != "" && h != "" && p.Host != h {
		fmt.Fprintf(s.err, "redline tune apply: warning: the plan was made on %s, this is %s; its values were read there\n", p.Host, h)
	}
	sys := o.system()
	defer sys.Close()
	if o.dryRun || !o.yes {
		previews, err := tune.Preview(ctx, sys, p)
		if err != nil {
			return exitCode(ExitError, "redline tune apply: "+err.Error())
		}
		tunePrintPreview(s.out, p, previews, tune.Warnings(sys, p))
		if o.dryRun {
			return nil
		}
		return exitCode(ExitError, "redline tune apply: nothing changed: add --yes to apply this plan")
	}
	for _, w := range tune.Warnings(sys, p) {
		fmt.Fprintln(s.err, "redline tune apply: WARNING:", w)
	}
	progress := func(out tune.Outcome) { tunePrintOutcome(s.out, out) }
	if o.json {
		progress = nil
	}
	res, err := tune.Apply(ctx, sys, p, tune.ApplyOptions{StateDir: o.stateDir, Progress: progress})
	if o.json && res != nil {
		if jerr := tuneWriteJSON(s.out, res); jerr != nil {
			return jerr
		}
	}
	return tuneApplyExit(s, o, res, err)
}

func tuneApplyExit(s *streams, o *tuneApplyOptions, res *tune.ApplyResult, err error) error {
	if res == nil {
		return exitCode(ExitError, "redline tune apply: "+err.Error())
	}
	if !o.json && res.Undo != nil {
		fmt.Fprintln(s.out, "rolled back after the failure:")
		for _, out := range res.Undo.Outcomes {
			tunePrintOutcome(s.out, out)
		}
	}
	if err != nil {
		return exitCode(ExitFailure, "redline tune apply: "+err.Error())
	}
	applied, refused := res.Count(tune.StatusApplied), res.Count(tune.StatusRefused)
	if !o.json {
		fmt.Fprintf(s.out, "\napplied %d, already in place %d, refused %d (journal %s, session %s)\n",
			applied, res.Count(tune.StatusUnchanged), refused, o.stateDir, res.Session)
		if applied > 0 {
			fmt.Fprintln(s.out, tuneVolatility(res.Outcomes))
			fmt.Fprintln(s.out, "undo with: redline tune rollback"+tuneStateDirFlag(o.stateDir))
		}
	}
	if refused > 0 {
		return exitCode(ExitFailure, fmt.Sprintf("redline tune apply: %d change(s) refused here (report-only; reasons above)", refused))
	}
	return nil
}

// tuneVolatility says what undoes the applied changes without redline:
// nothing is persisted.
func tuneVolatility(outs []tune.Outcome) string {
	byCause := map[string]int{}
	var causes []string
	for _, o := range outs {
		if o.Status != tune.StatusApplied {
			continue
		}
		cause := o.Change.LostOn()
		if byCause[cause] == 0 {
			causes = append(causes, cause)
		}
		byCause[cause]++
	}
	parts := make([]string, len(causes))
	for i, c := range causes {
		parts[i] = fmt.Sprintf("%d on %s", byCause[c], c)
	}
	return "nothing was persisted: lost " + strings.Join(parts, ", ")
}

func tuneStateDirFlag(dir string) string {
	if dir == tune.DefaultStateDir {
		return ""
	}
	return " --state-dir " + dir
}

// ---- status ----

func newTuneStatusCmd(s *streams) *cobra.Command {
	o := &tuneOptions{}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show what the journal holds and whether each value is still ours",
		Long: `status compares every journaled change with the live value: applied (still
what redline set), drift (someone changed it since: rollback will leave it),
gone (a reboot, a process exit or a Redis restart already undid it), intended
(journaled, but the apply stopped before writing). It changes nothing and does
not wait for a running apply.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTuneStatus(cmd.Context(), s, o) },
	}
	o.stateFlags(cmd)
	cmd.Flags().BoolVar(&o.json, "json", false, "print the status as JSON")
	return cmd
}

func runTuneStatus(ctx context.Context, s *streams, o *tuneOptions) error {
	rep, err := tune.Journaled(ctx, tune.StatusOptions{StateDir: o.stateDir, RedisPassword: os.Getenv("REDISCLI_AUTH")})
	if err != nil {
		return exitCode(ExitError, "redline tune status: "+err.Error())
	}
	if o.json {
		return tuneWriteJSON(s.out, rep)
	}
	tunePrintStatus(s.out, rep, o.stateDir)
	return nil
}

// ---- verify ----

func newTuneVerifyCmd(s *streams) *cobra.Command {
	o := &tuneOptions{}
	cmd := &cobra.Command{
		Use:   "verify [PLAN]",
		Short: "Check that the live values are the planned or journaled ones",
		Long: `verify with a PLAN compares every change's live value with the plan's; without
one it checks every journaled change is still in place. Exit status 0 when they
all are, 1 when not (the differences are printed), 2 when it could not check.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runTuneVerify(cmd.Context(), s, o, args) },
	}
	o.stateFlags(cmd)
	o.hostFlags(cmd)
	cmd.Flags().BoolVar(&o.json, "json", false, "print the result as JSON")
	return cmd
}

func runTuneVerify(ctx context.Context, s *streams, o *tuneOptions, args []string) error {
	if len(args) == 0 {
		rep, err := tune.Journaled(ctx, tune.StatusOptions{StateDir: o.stateDir, RedisPassword: os.Getenv("REDISCLI_AUTH")})
		if err != nil {
			return exitCode(ExitError, "redline tune verify: "+err.Error())
		}
		if o.json {
			if err := tuneWriteJSON(s.out, rep); err != nil {
				return err
			}
		} else {
			tunePrintStatus(s.out, rep, o.stateDir)
		}
		if !rep.Clean() {
			return exitCode(ExitFailure, "redline tune verify: some journaled changes are no longer in place")
		}
		return nil
	}
	return tuneVerifyPlanFile(ctx, s, o, args[0])
}

func tuneVerifyPlanFile(ctx context.Context, s *streams, o *tuneOptions, path string) error {
	if err := o.checkRoot(); err != nil {
		return err
	}
	p, err := tune.ReadPlanFile(path)
	if err != nil {
		return exitCode(ExitError, "redline tune verify: "+err.Error())
	}
	sys := o.system()
	defer sys.Close()
	outs, err := tune.Verify(ctx, sys, p)
	if err != nil {
		return exitCode(ExitError, "redline tune verify: "+err.Error())
	}
	if o.json {
		if err := tuneWriteJSON(s.out, outs); err != nil {
			return err
		}
	} else {
		for _, out := range outs {
			tunePrintOutcome(s.out, out)
		}
	}
	bad := 0
	for _, out := range outs {
		if out.Status != tune.StatusOK {
			bad++
		}
	}
	if bad > 0 {
		return exitCode(ExitFailure, fmt.Sprintf("redline tune verify: %d of %d changes are not in place", bad, len(outs)))
	}
	return nil
}

// ---- rollback ----

type tuneRollbackOptions struct {
	tuneOptions
	last, dryRun bool
	session      string
}

func newTuneRollbackCmd(s *streams) *cobra.Command {
	o := &tuneRollbackOptions{}
	cmd := &cobra.Command{
		Use:   "rollback",
		Short: "Restore journaled changes, newest first; leave and report values changed since",
		Long: `rollback reads the journal and restores each change's old value, newest first,
reading each back. A value someone changed since redline set it is left alone
and reported (drift); one a reboot, process exit or Redis restart already undid
is reported as gone. It works after redline was killed and after a reboot. The
machine (live or a rehearsal --root) comes from the journal.

Exit status: 0 when nothing is left to restore, 1 when some values could not be
restored (they stay journaled: run rollback again), 2 when it could not run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTuneRollback(cmd.Context(), s, o) },
	}
	o.stateFlags(cmd)
	cmd.Flags().BoolVar(&o.last, "last", false, "roll back only the most recent apply")
	cmd.Flags().StringVar(&o.session, "session", "", "roll back only this apply (its id, as apply and status print it)")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "show what would be restored and stop")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the result as JSON")
	return cmd
}

func runTuneRollback(ctx context.Context, s *streams, o *tuneRollbackOptions) error {
	progress := func(out tune.Outcome) { tunePrintOutcome(s.out, out) }
	if o.json {
		progress = nil
	}
	res, err := tune.Rollback(ctx, tune.RollbackOptions{StateDir: o.stateDir, Last: o.last, Session: o.session, DryRun: o.dryRun,
		RedisPassword: os.Getenv("REDISCLI_AUTH"), Progress: progress})
	if res == nil {
		return exitCode(ExitError, "redline tune rollback: "+err.Error())
	}
	if o.json {
		if jerr := tuneWriteJSON(s.out, res); jerr != nil {
			return jerr
		}
	} else {
		tunePrintRollbackSummary(s.out, res, o.dryRun)
	}
	if err != nil {
		return exitCode(ExitFailure, "redline tune rollback: "+err.Error())
	}
	return nil
}

func tunePrintRollbackSummary(w io.Writer, res *tune.RollbackResult, dry bool) {
	if len(res.Outcomes) == 0 {
		fmt.Fprintln(w, "nothing to roll back")
		return
	}
	fmt.Fprintf(w, "\nrestored %d, left alone (drift) %d, already undone (gone) %d, failed %d\n",
		res.Count(tune.StatusRestored), res.Count(tune.StatusDrift), res.Count(tune.StatusGone), res.Count(tune.StatusRestoreFailed))
	switch {
	case dry:
		fmt.Fprintln(w, "dry run: nothing was written")
	case res.Archived:
		fmt.Fprintln(w, "the journal is complete and moved to history/")
	}
}

// ---- output ----

// tuneStatusWord is how each status reads in the left column.
var tuneStatusWord = map[tune.Status]string{
	tune.StatusPlanned: "change", tune.StatusUnchanged: "in place", tune.StatusRefused: "refused",
	tune.StatusIntended: "intended", tune.StatusApplied: "applied", tune.StatusFailed: "FAILED",
	tune.StatusRestored: "restored", tune.StatusDrift: "drift", tune.StatusGone: "gone",
	tune.StatusRestoreFailed: "NOT RESTORED", tune.StatusOK: "ok", tune.StatusMismatch: "MISMATCH",
	tune.StatusUnknown: "unknown",
}

// target names a change for people: the file path for files and sysctls.
func tuneTarget(c change.Change) string {
	switch c.Kind {
	case change.KindSysctl:
		return "sysctl " + c.Target + " (" + host.SysctlPath(c.Target) + ")"
	case change.KindFile:
		return c.Target
	case change.KindAffinity:
		return "affinity of pid " + c.Target + " (every thread)"
	case change.KindChannels:
		return "channels of " + c.Target
	}
	return string(c.Kind) + " " + c.Target
}

func tunePrintOutcome(w io.Writer, o tune.Outcome) {
	c := o.Change
	line := fmt.Sprintf("%-12s %s", tuneStatusWord[o.Status], tuneTarget(c))
	switch o.Status {
	case tune.StatusUnchanged, tune.StatusOK:
		line += ": " + c.Show(tuneOrStr(o.Now, o.Old))
	case tune.StatusRestored, tune.StatusGone:
		line += ": " + c.Show(o.New) + " -> " + c.Show(o.Old)
	case tune.StatusMismatch:
		line += ": " + c.Show(o.Now) + ", want " + c.Show(c.Value)
	case tune.StatusDrift:
		line += ": now " + c.Show(o.Now)
	case tune.StatusRefused:
		line += ": want " + c.Show(c.Value)
	default:
		line += ": " + c.Show(o.Old) + " -> " + c.Show(tuneOrStr(o.New, c.Value))
	}
	fmt.Fprintln(w, line)
	if c.Why != "" || c.Rule != "" {
		fmt.Fprintf(w, "%-12s why: %s%s\n", "", c.Why, tuneRuleSuffix(c.Rule))
	}
	if o.Reason != "" {
		fmt.Fprintf(w, "%-12s %s\n", "", o.Reason)
	}
}

func tuneRuleSuffix(rule string) string {
	if rule == "" {
		return ""
	}
	return " [" + rule + "]"
}

func tuneOrStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func tunePrintPreview(w io.Writer, p *tune.Plan, outs []tune.Outcome, warnings []string) {
	counts := map[tune.Status]int{}
	for _, o := range outs {
		counts[o.Status]++
		tunePrintOutcome(w, o)
	}
	if p.Redis != nil {
		fmt.Fprintf(w, "redis-config changes go to %s%s\n", p.Redis.Addr, map[bool]string{true: " (persisted with CONFIG REWRITE)"}[p.Redis.Rewrite])
	}
	for _, n := range p.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	for _, n := range warnings {
		fmt.Fprintln(w, "WARNING:", n)
	}
	fmt.Fprintf(w, "\n%d changes: %d to make, %d already in place, %d refused here\n",
		len(outs), counts[tune.StatusPlanned], counts[tune.StatusUnchanged], counts[tune.StatusRefused])
}

func tunePrintStatus(w io.Writer, rep *tune.StatusReport, stateDir string) {
	if len(rep.Sessions) == 0 {
		fmt.Fprintf(w, "nothing applied (journal %s)\n", stateDir)
		return
	}
	for _, s := range rep.Sessions {
		fmt.Fprintf(w, "apply %s at %s on %s, root %s: %s\n", s.ID, s.Started, tuneOrStr(s.Info.Hostname, "?"), s.Info.Root, tuneSessionEnd(s))
		if s.Rebooted {
			fmt.Fprintln(w, "  the machine rebooted since: values that do not survive a reboot are gone")
		}
		for _, c := range s.Changes {
			tunePrintOutcome(w, c.Outcome)
			fmt.Fprintf(w, "%-12s lost on: %s\n", "", c.LostOn)
		}
	}
	if !rep.Clean() {
		fmt.Fprintln(w, "\nsome values are no longer what redline set; rollback restores only those still ours")
	}
}

func tuneSessionEnd(s tune.SessionStatus) string {
	switch s.End {
	case "commit":
		return "complete"
	case "abort":
		return "failed and rolled back (some values could not be restored)"
	}
	return "INTERRUPTED (redline stopped mid-apply): run redline tune rollback"
}

func tuneWriteJSON(w io.Writer, v any) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	if err := e.Encode(v); err != nil {
		return errors.Join(errors.New("write JSON"), err)
	}
	return nil
}
