package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"redline/internal/doctor"
	"redline/internal/host"
	"redline/internal/remote"
	"redline/internal/tune"
)

// remoteCallTimeout bounds one operation on the server host (a doctor
// --sample adds its own length).
const remoteCallTimeout = 10 * time.Minute

func callRemote(ctx context.Context, c *remote.Client, extra time.Duration, op string, args, result any) error {
	ctx, cancel := context.WithTimeout(ctx, remoteCallTimeout+extra)
	defer cancel()
	return c.Call(ctx, op, args, result)
}

func runInspectRemote(ctx context.Context, s *streams, o *inspectOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	if o.root != "/" || o.procfs != "" || o.sysfs != "" || o.capture != "" {
		return usageError("redline inspect: --ssh reads the live server host; --root, --procfs, --sysfs and --capture are for this machine")
	}
	c, err := o.remote.dial(ctx, s, "inspect", tune.DefaultStateDir)
	if err != nil {
		return err
	}
	defer hangUp(c)
	var snap host.Snapshot
	args := remote.SnapshotArgs{PIDs: o.pids, Ports: o.ports, IRQPatterns: o.irqPatterns, NoProcesses: o.noProcesses}
	if err := callRemote(ctx, c, 0, remote.OpSnapshot, args, &snap); err != nil {
		return exitCode(ExitError, "redline inspect: "+err.Error())
	}
	return writeSnapshot(s, o, &snap)
}

func remoteDoctorReport(ctx context.Context, s *streams, o *doctorOptions) (*doctor.Report, error) {
	if o.root != "/" || o.intrinsic > 0 {
		return nil, errors.New("--ssh checks the live server host; --root and --intrinsic-latency are for this machine")
	}
	c, err := o.remote.dial(ctx, s, "doctor", tune.DefaultStateDir)
	if err != nil {
		return nil, err
	}
	defer hangUp(c)
	args := remote.DoctorArgs{Pid: o.pid, Iface: o.iface, Clients: o.clients, Sample: o.sample, Only: o.only, Skip: o.skip, IRQPatterns: o.irqPatterns, Cluster: o.clusterMode()}
	if !o.noRedis {
		args.Redis = &remote.RedisTarget{Addr: net.JoinHostPort(o.host, strconv.Itoa(o.port)), User: o.user, Password: o.password}
		if o.socket != "" {
			args.Redis.Network, args.Redis.Addr = "unix", o.socket
		}
	}
	var raw json.RawMessage
	err = callRemote(ctx, c, o.sample, remote.OpDoctor, args, &raw)
	if err != nil && args.Redis != nil && !o.redisExplicitlySet {
		fmt.Fprintf(s.err, "redline doctor: %v; checking the host only\n", err)
		args.Redis = nil
		err = callRemote(ctx, c, o.sample, remote.OpDoctor, args, &raw)
	}
	if err != nil {
		return nil, err
	}
	return doctor.ReadReport(bytes.NewReader(raw))
}

// remoteRedis is the server a remote plan's redis-config changes go to,
// with the password (which travels only inside the session).
func remoteRedis(o *tuneOptions, p *tune.Plan) *remote.RedisTarget {
	pw := o.password
	switch {
	case o.redis != "":
		r := tuneRedisOptions(o.redis, o.user)
		return &remote.RedisTarget{Network: r.Network, Addr: r.Addr, User: r.User, Password: pw}
	case p != nil && p.Redis != nil && pw != "":
		return &remote.RedisTarget{Network: p.Redis.Network, Addr: p.Redis.Addr, User: p.Redis.User, Password: pw}
	}
	return nil
}

func runTuneApplyRemote(ctx context.Context, s *streams, o *tuneApplyOptions, path string) error {
	if o.root != "/" && o.root != "" {
		return usageError("redline tune apply: --ssh applies on the live server host; --root is for this machine")
	}
	p, err := tune.ReadPlanFile(path)
	if err != nil {
		return exitCode(ExitError, "redline tune apply: "+err.Error())
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return exitCode(ExitError, "redline tune apply: "+err.Error())
	}
	c, err := o.remote.dial(ctx, s, "tune apply", o.stateDir)
	if err != nil {
		return err
	}
	defer hangUp(c)
	if p.Host != "" && p.Host != c.Hello.Hostname {
		fmt.Fprintf(s.err, "redline tune apply: warning: the plan was made on %s, this is %s; its values were read there\n", p.Host, c.Hello.Hostname)
	}
	args := remote.TuneApplyArgs{Plan: raw, Redis: remoteRedis(&o.tuneOptions, p)}
	if o.dryRun || !o.yes {
		var pre remote.TunePreviewResult
		if err := callRemote(ctx, c, 0, remote.OpTunePreview, args, &pre); err != nil {
			return exitCode(ExitError, "redline tune apply: "+err.Error())
		}
		tunePrintPreview(s.out, p, pre.Outcomes, pre.Warnings)
		if o.dryRun {
			return nil
		}
		return exitCode(ExitError, "redline tune apply: nothing changed: add --yes to apply this plan")
	}
	args.Scoped = true // until it has answered: a lost link mid-apply undoes it
	var out remote.TuneApplyResult
	if err := callRemote(ctx, c, 0, remote.OpTuneApply, args, &out); err != nil {
		return exitCode(ExitError, "redline tune apply: "+err.Error()+" (the session on the server host rolls back what it applied)")
	}
	if out.Result.Session != "" {
		if err := callRemote(ctx, c, 0, remote.OpTuneKeep, remote.TuneKeepArgs{Session: out.Result.Session}, nil); err != nil {
			return exitCode(ExitFailure, "redline tune apply: "+err.Error()+" (the session on the server host rolls back what it applied)")
		}
	}
	if o.json {
		if err := tuneWriteJSON(s.out, out.Result); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(s.out, "on %s:\n", c.Hello.Hostname)
		for _, oc := range out.Result.Outcomes {
			tunePrintOutcome(s.out, oc)
		}
	}
	return tuneApplyExit(s, o, out.Result, remoteError(out.Error))
}

func remoteError(msg string) error {
	if msg == "" {
		return nil
	}
	return errors.New(msg)
}

func runTuneRollbackRemote(ctx context.Context, s *streams, o *tuneRollbackOptions) error {
	c, err := o.remote.dial(ctx, s, "tune rollback", o.stateDir)
	if err != nil {
		return err
	}
	defer hangUp(c)
	var out remote.TuneRollbackResult
	args := remote.TuneRollbackArgs{Session: o.session, Last: o.last, DryRun: o.dryRun, RedisPassword: o.password}
	if err := callRemote(ctx, c, 0, remote.OpTuneRollback, args, &out); err != nil {
		return exitCode(ExitError, "redline tune rollback: "+err.Error())
	}
	if o.json {
		if err := tuneWriteJSON(s.out, out.Result); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(s.out, "on %s:\n", c.Hello.Hostname)
		for _, oc := range out.Result.Outcomes {
			tunePrintOutcome(s.out, oc)
		}
		tunePrintRollbackSummary(s.out, out.Result, o.dryRun)
	}
	if out.Error != "" {
		return exitCode(ExitFailure, "redline tune rollback: "+out.Error)
	}
	return nil
}

func runTuneStatusRemote(ctx context.Context, s *streams, o *tuneOptions) error {
	c, err := o.remote.dial(ctx, s, "tune status", o.stateDir)
	if err != nil {
		return err
	}
	defer hangUp(c)
	var rep tune.StatusReport
	if err := callRemote(ctx, c, 0, remote.OpTuneStatus, remote.TuneStatusArgs{RedisPassword: o.password}, &rep); err != nil {
		return exitCode(ExitError, "redline tune status: "+err.Error())
	}
	if o.json {
		return tuneWriteJSON(s.out, &rep)
	}
	fmt.Fprintf(s.out, "on %s:\n", c.Hello.Hostname)
	tunePrintStatus(s.out, &rep, o.stateDir)
	return nil
}

// runTuneVerifyRemote verifies on the server host: its journal, or a
// plan's values against its live ones.
func runTuneVerifyRemote(ctx context.Context, s *streams, o *tuneOptions, args []string) error {
	if o.root != "/" && o.root != "" {
		return usageError("redline tune verify: --ssh verifies the live server host; --root is for this machine")
	}
	var p *tune.Plan
	var raw []byte
	if len(args) == 1 {
		var err error
		if p, err = tune.ReadPlanFile(args[0]); err == nil {
			raw, err = json.Marshal(p)
		}
		if err != nil {
			return exitCode(ExitError, "redline tune verify: "+err.Error())
		}
	}
	c, err := o.remote.dial(ctx, s, "tune verify", o.stateDir)
	if err != nil {
		return err
	}
	defer hangUp(c)
	if !o.json {
		fmt.Fprintf(s.out, "on %s:\n", c.Hello.Hostname)
	}
	if p == nil {
		var rep tune.StatusReport
		if err := callRemote(ctx, c, 0, remote.OpTuneStatus, remote.TuneStatusArgs{RedisPassword: o.password}, &rep); err != nil {
			return exitCode(ExitError, "redline tune verify: "+err.Error())
		}
		return tuneVerifyJournal(s, o, &rep)
	}
	var out remote.TuneVerifyResult
	if err := callRemote(ctx, c, 0, remote.OpTuneVerify, remote.TuneApplyArgs{Plan: raw, Redis: remoteRedis(o, p)}, &out); err != nil {
		return exitCode(ExitError, "redline tune verify: "+err.Error())
	}
	return tuneVerifyOutcomes(s, o, out.Outcomes)
}
