package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"redline/internal/atomicfile"
	"redline/internal/host"
	"redline/internal/serverhost"
)

func init() { register(newInspectCmd) }

// inspectOptions are inspect's flags.
type inspectOptions struct {
	json        bool
	root        string
	procfs      string
	sysfs       string
	capture     string
	pids        []int
	irqPatterns []string
	ports       []int
	noProcesses bool
	netns       string
	remote      remoteOptions
}

func newInspectCmd(s *streams) *cobra.Command {
	o := &inspectOptions{}
	cmd := &cobra.Command{
		Use:   "inspect",
		Short: "Show the host Redis runs on: CPUs, NUMA, NIC queues and their IRQs, sysctls, Redis threads",
		Long: `inspect reads the machine (read-only) and prints what matters for Redis performance:
the CPU and NUMA topology; for each NIC, its queues, the IRQ serving each queue, that IRQ's
affinity and the NUMA nodes it reaches (marking IRQs outside the NIC's node); the Redis
processes with the CPU and node of every thread; THP, swap, sysctls and irqbalance.

--json prints the whole snapshot (schema in docs/inspect.md). --root reads a fixture tree
instead of the live machine; --capture copies exactly the files inspect read into a new
directory, so a machine can be sent and inspected elsewhere (redline inspect --root DIR).`,
		Example: `  redline inspect
  redline inspect --json > host.json
  redline inspect -p 7601
  redline inspect --netns blue -p 6379
  redline inspect --pid 4242 --irq-pattern 'REGEXP:VAR_ETH_qpVAR_QUEUE'
  redline inspect --capture /tmp/myhost && tar czf myhost.tgz -C /tmp myhost
  redline inspect --root testdata/hosts/kunpeng920-4node-hinic`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError("redline inspect: unexpected argument %q (inspect takes only flags; see redline inspect --help)", args[0])
			}
			return nil
		},
		DisableAutoGenTag: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runInspect(cmd.Context(), s, o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.json, "json", false, "print the whole snapshot as JSON")
	f.StringVar(&o.root, "root", "/", "read the host below `DIR` (a fixture tree) instead of /")
	f.StringVar(&o.procfs, "procfs", "", "where /proc is (`DIR`; default ROOT/proc)")
	f.StringVar(&o.sysfs, "sysfs", "", "where /sys is (`DIR`; default ROOT/sys)")
	f.StringVar(&o.capture, "capture", "", "also copy every file read into `DIR` (new or empty), as a fixture tree")
	f.IntSliceVar(&o.pids, "pid", nil, "describe this Redis `PID` (repeatable; default: every redis-server, valkey-server, keydb-server)")
	f.StringArrayVar(&o.irqPatterns, "irq-pattern", nil, "extra queue-IRQ naming rule, oeAware style: 'REGEXP:VAR_ETH_qpVAR_QUEUE' (repeatable)")
	f.IntSliceVarP(&o.ports, "port", "p", nil, "describe the redis-servers listening on this `PORT` here, and count TCP sockets to and from it (repeatable; 6379 always counted)")
	f.BoolVar(&o.noProcesses, "no-processes", false, "skip Redis processes")
	netnsFlag(cmd, &o.netns)
	o.remote.flags(cmd)
	return cmd
}

func (o *inspectOptions) validate() error {
	for _, p := range o.irqPatterns {
		if err := host.ValidateIRQPattern(p); err != nil {
			return usageError("redline inspect: --irq-pattern: %v", err)
		}
	}
	for _, pid := range o.pids {
		if pid <= 0 {
			return usageError("redline inspect: --pid %d: a pid is a positive number", pid)
		}
	}
	for _, port := range o.ports {
		if port <= 0 || port > 65535 {
			return usageError("redline inspect: --port %d: want 1-65535", port)
		}
	}
	return nil
}

func runInspect(ctx context.Context, s *streams, o *inspectOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	if err := checkOutputs("inspect", dirOutput("--capture", o.capture)); err != nil {
		return err
	}
	if o.capture != "" {
		if err := host.CheckCaptureDest(o.capture); err != nil {
			return usageError("redline inspect: cannot write --capture %s: %v", o.capture, err)
		}
	}
	if err := checkNetNS("inspect", o.netns, o.remote); err != nil {
		return err
	}
	h, err := o.remote.openHost(ctx, s, "inspect", serverhost.LocalOptions{Root: o.root, Proc: o.procfs, Sys: o.sysfs, Record: o.capture != "", NetNS: o.netns})
	if err != nil {
		return err
	}
	defer closeHost(s, "inspect", h)
	snap, err := h.Snapshot(ctx, serverhost.SnapshotArgs{PIDs: o.pids, Ports: o.ports, IRQPatterns: o.irqPatterns, NoProcesses: o.noProcesses})
	if err != nil {
		return exitCode(ExitError, fmt.Sprintf("redline inspect: %v", err))
	}
	if rec, ok := h.(interface{ Recorded() *host.FS }); ok && o.capture != "" {
		if err := captureTree(s, rec.Recorded(), snap, o.capture); err != nil {
			return err
		}
	}
	o.selectByPort(s, snap)
	if err := writeSnapshot(s, o, snap); err != nil {
		return err
	}
	return o.missingPIDs(snap)
}

// selectByPort keeps, with -p, the servers listening on one of the ports
// in inspect's network namespace; when none does, every server is shown
// and stderr says so.
func (o *inspectOptions) selectByPort(s *streams, snap *host.Snapshot) {
	if len(o.ports) == 0 || len(o.pids) > 0 || len(snap.Processes) == 0 {
		return
	}
	var keep []host.Process
	for _, p := range snap.Processes {
		if !p.OtherNetNS() && slices.ContainsFunc(p.Listen, func(l host.ListenSocket) bool { return slices.Contains(o.ports, l.Port) }) {
			keep = append(keep, p)
		}
	}
	if len(keep) == 0 {
		fmt.Fprintf(s.err, "redline inspect: no redis-server in this network namespace listens on port %s: showing every one found\n", joinPorts(o.ports))
		return
	}
	snap.Processes = keep
}

func joinPorts(ports []int) string {
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ",")
}

// missingPIDs fails inspect when a --pid it was given is not described:
// the report says why (host.UnseenProcess or its errors), the exit
// status must too.
func (o *inspectOptions) missingPIDs(snap *host.Snapshot) error {
	var missing []string
	for _, pid := range o.pids {
		if snap.Process(pid) == nil {
			missing = append(missing, strconv.Itoa(pid))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return exitCode(ExitFailure, fmt.Sprintf("redline inspect: pid %s not described (see the errors above)", strings.Join(missing, ", ")))
}

// writeSnapshot prints the snapshot as inspect's output.
func writeSnapshot(s *streams, o *inspectOptions, snap *host.Snapshot) error {
	if o.json {
		enc := json.NewEncoder(s.out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(snap); err != nil {
			return exitCode(ExitFailure, fmt.Sprintf("redline inspect: write JSON: %v", err))
		}
	} else if err := host.WriteSummary(s.out, snap); err != nil {
		return exitCode(ExitFailure, fmt.Sprintf("redline inspect: %v", err))
	}
	if n := len(snap.Errors); n > 0 && o.json {
		fmt.Fprintf(s.err, "redline inspect: %d part(s) of the host could not be read; see \"errors\" in the JSON\n", n)
	}
	return nil
}

// captureTree writes the capture and a SOURCE file saying where it came
// from.
func captureTree(s *streams, fs *host.FS, snap *host.Snapshot, dir string) error {
	st, err := host.Capture(fs, dir)
	if err != nil {
		return exitCode(ExitFailure, fmt.Sprintf("redline inspect: --capture: %v", err))
	}
	if err := atomicfile.Write(filepath.Join(dir, "SOURCE"), []byte(captureSource(snap, st)), 0o644); err != nil {
		return exitCode(ExitFailure, fmt.Sprintf("redline inspect: --capture: %v", err))
	}
	fmt.Fprintf(s.err, "redline inspect: captured %d files, %d links, %d directories into %s (read it back with: redline inspect --root %s)\n",
		st.Files, st.Links, st.Dirs, dir, dir)
	return nil
}

func captureSource(snap *host.Snapshot, st host.CaptureStats) string {
	when := time.Now().UTC()
	if snap.Source.Time != nil {
		when = *snap.Source.Time
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Captured with `redline inspect --capture` (redline %s)\n", Version())
	fmt.Fprintf(&b, "from %s (root %s) at %s.\n", orUnknown(snap.Hostname), snap.Source.Root, when.Format(time.RFC3339))
	fmt.Fprintf(&b, "Kernel %s %s; %s.\n", snap.Kernel.Release, snap.Kernel.Arch, orUnknown(snap.CPU.ModelName))
	fmt.Fprintf(&b, "%d files (%d bytes, as read), %d symlinks, %d unreadable markers, %d ethtool/netns answers.\n",
		st.Files, st.BytesCopied, st.Links, st.Unreadable, st.Virtual)
	b.WriteString("Only the files redline read are here; a symlink whose target starts with \"unreadable:\"\n")
	b.WriteString("stands for a file the kernel lists but refuses to read (the errno follows the colon).\n")
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
