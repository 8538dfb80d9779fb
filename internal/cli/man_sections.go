package cli

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

// manSections is what a command's man page says beyond its --help: its
// examples, what exit status 1 means for it, and its own environment
// variables and files. Every visible command has an entry, keyed by its
// path ("redline tune apply"); TestManPagesComplete fails, naming the
// command, when one lacks it. The parts every command shares (the exit
// codes, REDISCLI_AUTH where there is --pass-file, the journal where there
// is --state-dir, ssh where there is --ssh, the installed documentation)
// are added from the command's flags by manEnvironment and manFiles.
type manSections struct {
	// Examples are command lines, each followed by a line saying what it
	// does (two-space indented, as cobra's Example).
	Examples string
	// Exit1 is what exit status 1 means for the command ("" when it
	// never exits 1).
	Exit1 string
	// Env and Files are the command's own, beyond those its flags imply:
	// "NAME\nwhat" pairs.
	Env, Files [][2]string
}

var manTable = map[string]manSections{
	"redline": {
		Examples: `  redline doctor
      read-only: what is wrong with this host and its Redis server, with evidence and undo
  redline inspect
      read-only: CPUs, NUMA nodes, NIC queues and their IRQs, sysctls, Redis threads
  redline bench -t set,get -n 100000 -q
      load Redis as redis-benchmark does
  make lab    (in redline's source tree)
      the whole before/after experiment on a server redline starts itself`,
		Exit1: "the command ran and failed (for doctor: it found something at or above --fail-on)",
	},
	"redline autotune": {
		Examples: `  redline autotune --server-config "hz 500" --budget 15m --dir at1
      search the knob catalog on a redis-server autotune starts; results in at1/
  redline autotune --resume at1
      continue a search that was stopped
  redline autotune --addr 10.0.0.5:6379 --pass-file pw --apply
      search on an existing server, leave the confirmed plan applied (journaled)
  redline tune rollback --state-dir at1/tune
      undo what an --apply left`,
		Exit1: "the search or its confirmation failed; the host is rolled back and --resume DIR continues",
		Files: [][2]string{{"DIR/plan.yaml", "the confirmed plan (--dir DIR), for redline tune apply"}, {"DIR/tune", "the journal of the changes the search made"}},
	},
	"redline bench": {
		Examples: `  redline bench -t set,get -c 32 -n 500000 -r 500000 --threads 6 -q -h 10.0.0.5
      redis-benchmark's command line, unchanged
  redline bench -t set -c 50 --duration 30s --warmup 5s -o set.json
      a timed run, its results and HDR histograms saved as JSON
  redline bench --rate 50000 --duration 20s -t get -r 100000
      open loop: latency from the intended send times
  redline bench --cluster -p 7000 -t set,get -r 1000000 -q
      a Redis Cluster, routed by slot`,
		Exit1: "the run failed (connection lost, server errors) or its results could not be saved; what was measured is printed first",
	},
	"redline build": {
		Examples: `  redline build --source debian
      Debian's redis source, gcc -O2, jemalloc; cached
  redline build --source debian --cc clang -O -O3 --lto thin --pgo
      clang, -O3, thin LTO and profile-guided optimization
  redline build --ssh admin@redis-a --source debian -O -O3
      built on the server host, in its cache`,
		Exit1: "the build failed",
		Files: [][2]string{{"/var/cache/redline/build", "the build cache (--cache), one directory per source, toolchain and flags"}},
	},
	"redline completion": {
		Examples: `  redline completion bash > /etc/bash_completion.d/redline
      bash completion for every user (make install puts it in PREFIX/share/bash-completion)`,
	},
	"redline completion bash": {
		Examples: `  source <(redline completion bash)
      completion in this shell
  redline completion bash > /etc/bash_completion.d/redline
      for every new shell`,
		Files: [][2]string{{"/usr/local/share/bash-completion/completions/redline", "where make install puts it"}},
	},
	"redline completion fish": {
		Examples: `  redline completion fish | source
      completion in this shell
  redline completion fish > ~/.config/fish/completions/redline.fish
      for every new shell`,
		Files: [][2]string{{"/usr/local/share/fish/vendor_completions.d/redline.fish", "where make install puts it"}},
	},
	"redline completion powershell": {
		Examples: `  redline completion powershell | Out-String | Invoke-Expression
      completion in this shell`,
	},
	"redline completion zsh": {
		Examples: `  source <(redline completion zsh)
      completion in this shell
  redline completion zsh > "${fpath[1]}/_redline"
      for every new shell`,
		Files: [][2]string{{"/usr/local/share/zsh/site-functions/_redline", "where make install puts it"}},
	},
	"redline doctor": {
		Examples: `  redline doctor
      every rule against this host and the redis-server at 127.0.0.1:6379 (or the one found)
  redline doctor -p 6380 --pass-file /etc/redis/pw
      another server, with its password
  redline doctor --netns blue -p 6379
      a server in the network namespace blue
  redline doctor --sample 10s --min-severity medium
      counters watched for 10 seconds; medium findings and above
  redline doctor --json > findings.json
      the report as JSON, for redline report or a fleet table`,
		Exit1: "a shown finding is at or above --fail-on (default low); exit 2 also when the report is incomplete (a rule could not read what it needs)",
	},
	"redline inspect": {
		Examples: `  redline inspect
      the host model: topology, NIC queues -> IRQs -> CPUs -> nodes, Redis threads
  redline inspect -p 6379
      only the servers on port 6379
  redline inspect --json > host.json
      the whole snapshot as JSON
  redline inspect --capture DIR
      copy exactly the files read into a fixture tree`,
		Exit1: "a --pid could not be described, or the JSON or the capture could not be written",
	},
	"redline lab": {
		Examples: `  redline lab
      the default scenario: a server in its own network namespace, the doctor, a baseline, the safe fixes, CPUs apart
  redline lab scenario.yaml -o results
      a scenario file; results and reports in results/
  redline lab --budget 10m --profile
      a longer budget, and a CPU profile of every variant
  redline report results/result.json -o report.html
      the report again, from the saved results`,
		Exit1: "the lab failed after it started: what was measured is saved and the host rolled back (the message says where); or the report could not be written",
		Files: [][2]string{
			{"DIR/result.json", "the results (-o DIR; default ./redline-lab-TIMESTAMP)"},
			{"DIR/report.md, DIR/report.html, DIR/runs.csv", "the reports"},
			{"DIR/logs/redis-server-N.log", "the log of each start of a server the lab started"},
		},
	},
	"redline profile": {
		Examples: `  redline profile -p 6379 --duration 10s -o prof
      perf call stacks of the server on port 6379: prof/folded.txt, top.txt, flame.svg
  redline profile -p 6379 -o after --base prof
      and a difference flame graph against an earlier profile`,
		Exit1: "the profile could not be taken",
		Files: [][2]string{{"DIR/folded.txt, DIR/top.txt, DIR/flame.svg, DIR/diff.svg", "the profile (-o DIR)"}},
	},
	"redline report": {
		Examples: `  redline report results/result.json -o report.html
      a lab's results as HTML (--format md, html, csv or json)
  redline report k310.json=3.10 k419.json=4.19 --by kernel
      bench or lab results of several hosts or runs, merged into one table
  redline report a.json b.json c.json
      saved doctor reports or verifications: a fleet table`,
		Exit1: "an input could not be read or the report could not be written",
	},
	"redline steer": {
		Examples: `  redline steer --dry-run
      say which IRQs would move, move none
  redline steer -p 6379 --listen :9464
      steer for the server on port 6379, metrics for Prometheus on :9464; every IRQ restored on exit`,
		Exit1: "steering failed (its IRQ moves are rolled back; the message says if redline tune rollback is needed) or --listen could not listen",
		Files: [][2]string{{"/run/redline/steer.json", "the status file redline steer status reads (--status-file)"}},
	},
	"redline steer status": {
		Examples: `  redline steer status
      what the running steer sees and has moved`,
		Exit1: "no steer is running (no status file)",
		Files: [][2]string{{"/run/redline/steer.json", "the status file (--status-file)"}},
	},
	"redline tune": {
		Examples: `  redline tune plan --profile irq-local,net-sysctl -o plan.yaml
      write a plan; nothing changes
  redline tune apply plan.yaml --yes
      apply it, each change journaled before it is made
  redline tune rollback
      put every journaled value back`,
		Exit1: "see each subcommand",
	},
	"redline guard": {
		Examples: `  redline guard plan.yaml --yes -p 6379 --guard-window 6h
      apply the plan, then watch the server for six hours; a tripped rule rolls it back
  redline guard --resume watch -p 6379
      take over the watch of a guard that was killed, against its journaled baseline
  redline guard --resume rollback
      roll back every change a killed guard left unwatched`,
		Exit1: "a rule tripped and the change was rolled back (or a rollback failed)",
		Files: [][2]string{{"STATE/guard/ID.json", "a guard's baseline and state (--state-dir STATE), with its lock beside it"}},
	},
	"redline tune persist": {
		Examples: `  redline tune persist plan.yaml --yes
      apply the plan and write what brings it back after a reboot, in one journal session
  redline tune persist plan.yaml --yes --root /tmp/rehearsal
      write the files below a rehearsal tree instead of /
  redline tune rollback
      undo the plan and remove its boot files`,
		Exit1: "a change failed (the plan's changes and files are rolled back) or was refused on this host",
		Files: [][2]string{
			{"/etc/sysctl.d/90-redline.conf", "the plan's sysctls, loaded at boot by systemd-sysctl"},
			{"/etc/redline/boot-plan.yaml", "the plan's IRQ, RPS/XPS, THP, governor and NIC changes, applied at boot"},
			{"/etc/systemd/system/redline-boot.service", "the unit that runs redline tune apply --boot"},
		},
	},
	"redline workload": {
		Examples: `  redline workload capture -h 10.0.0.5 --duration 30s -o prod.yaml
      a live server's command mix and data set, read-only
  redline workload compare -f prod.yaml
      replay it on a scratch server and print how far it is from the source
  redline bench --workload-file prod.yaml --duration 30s -n 0
      load a server with that traffic`,
		Exit1: "the sub-command failed (compare: a figure outside its limit)",
	},
	"redline workload capture": {
		Examples: `  redline workload capture -h 10.0.0.5 -p 6379 --duration 30s -o prod.yaml
      count 30 s of commands and sample up to 1000 keys; key patterns hashed
  redline workload capture --addr 10.0.0.5:6379 --pass-file pw --keep-names -o prod.yaml
      with a password from a file, the key patterns' words kept`,
		Exit1: "the server could not be read or the file not written",
	},
	"redline workload check": {
		Examples: `  redline workload check examples/workloads/session-store.yaml
      validate a workload file; an error names its line`,
		Exit1: "the file is not a valid workload file",
	},
	"redline workload compare": {
		Examples: `  redline workload compare -f prod.yaml --duration 20s
      replay on a scratch server redline starts, differences printed against their limits
  redline workload compare -f prod.yaml --scratch 127.0.0.1:7000
      replay on an empty server of yours`,
		Exit1: "a figure of the replay is outside its limit, or the replay failed",
	},
	"redline tune apply": {
		Examples: `  redline tune apply plan.yaml
      show what would change; change nothing
  redline tune apply plan.yaml --yes
      apply without asking; every change journaled first, read back after
  redline tune apply plan.yaml --yes --ssh admin@redis-a
      on a server host through ssh, undone there if the link drops`,
		Exit1: "a change failed (the plan's changes are rolled back) or was refused on this host",
	},
	"redline tune plan": {
		Examples: `  redline tune plan --profile irq-local,rps-xps,net-sysctl -o plan.yaml
      profiles planned against this host
  redline tune plan --doctor -p 6379 -o plan.yaml
      the doctor's fixes for the server on port 6379
  redline tune plan --profile redis-config --redis 10.0.0.5:6379 --pass-file pw
      Redis settings of another server`,
	},
	"redline tune rollback": {
		Examples: `  redline tune rollback
      restore every value in the journal (/var/lib/redline)
  redline tune rollback --state-dir at1/tune
      the journal autotune left`,
		Exit1: "a value could not be restored (it stays journaled; run rollback again)",
	},
	"redline tune status": {
		Examples: `  redline tune status
      what the journal holds, each value as it is now
  redline tune status --json
      the same as JSON`,
	},
	"redline tune verify": {
		Examples: `  redline tune verify
      are the journaled changes still in place?
  redline tune verify plan.yaml
      is this host as the plan says?`,
		Exit1: "some changes are no longer in place (or could not be read)",
	},
	"redline version": {
		Examples: `  redline version
      the version, the commit it was built from and the Go version`,
	},
}

// manInfoOf is c's entry, and whether it has one.
func manInfoOf(c *cobra.Command) (manSections, bool) {
	m, ok := manTable[c.CommandPath()]
	return m, ok
}

// manExamples are c's examples: its entry's, else its Example.
func manExamples(c *cobra.Command) string {
	if m, ok := manInfoOf(c); ok && m.Examples != "" {
		return m.Examples
	}
	return c.Example
}

// manExit are the exit statuses: the ones every command shares, with
// what 1 means for c.
func manExit(c *cobra.Command) [][2]string {
	m, _ := manInfoOf(c)
	out := [][2]string{{"0", "success"}}
	if m.Exit1 != "" {
		out = append(out, [2]string{"1", m.Exit1})
	}
	return append(out,
		[2]string{"2", "it could not run: a bad flag or value, an unknown command, a file that cannot be read or an output that cannot be written (checked before any work)"},
		[2]string{"128+N", "stopped by signal N: 130 Ctrl-C, 129 the terminal or SSH session closed, 131 SIGQUIT, 143 SIGTERM; what was changed is rolled back and what was measured saved"},
		[2]string{"141", "standard output or standard error was closed"})
}

// manEnvironment are the variables c reads: those its flags imply, then
// its own.
func manEnvironment(c *cobra.Command) [][2]string {
	var out [][2]string
	if manHasFlag(c, "pass-file") {
		out = append(out, [2]string{"REDISCLI_AUTH", "the Redis password when neither -a nor --pass-file gives one (as redis-cli reads it); never printed or saved"})
	}
	if manHasFlag(c, "ssh") {
		out = append(out, [2]string{"SSH_AUTH_SOCK", "the ssh agent --ssh's connections use, as ssh(1) does"})
	}
	if c.Name() == "man" || !c.HasParent() {
		out = append(out, [2]string{"SOURCE_DATE_EPOCH", "the date written into the man pages (reproducible builds)"})
	}
	m, _ := manInfoOf(c)
	out = append(out, m.Env...)
	if len(out) == 0 {
		out = append(out, [2]string{"none", "this command reads no environment variable of its own"})
	}
	return out
}

// manFiles are the files c reads or writes: those its flags imply, its
// own, and the installed documentation.
func manFiles(c *cobra.Command, docdir string) [][2]string {
	var out [][2]string
	if manHasFlag(c, "state-dir") {
		out = append(out, [2]string{"/var/lib/redline", "the tune journal (--state-dir): every change is written there before it is made, so rollback restores it after a crash"})
	}
	if manHasFlag(c, "ssh") {
		out = append(out, [2]string{"~/.ssh/config", "read by the ssh that --ssh runs (or --ssh-config FILE where the command has it)"})
	}
	m, _ := manInfoOf(c)
	out = append(out, m.Files...)
	if docdir != "" {
		out = append(out, [2]string{docdir, "redline's documentation: a page per command, the threat model (security.md), benchmarks"})
	}
	return out
}

// manUndocumented lists the visible commands of root without an entry in
// manTable, sorted.
func manUndocumented(root *cobra.Command) []string {
	var out []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		if m, ok := manInfoOf(c); !ok || m.Examples == "" {
			out = append(out, c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	sort.Strings(out)
	return out
}

// manDocRef rewrites the source tree's docs/NAME.md into the installed
// documentation's path, so no page points at a file that is not there.
func manDocRef(s, docdir string) string {
	if docdir == "" {
		return s
	}
	return strings.ReplaceAll(s, "docs/", strings.TrimSuffix(docdir, "/")+"/")
}

// manHasFlag reports whether c takes --name, its own or a parent's.
func manHasFlag(c *cobra.Command, name string) bool {
	return c.Flags().Lookup(name) != nil || c.InheritedFlags().Lookup(name) != nil
}
