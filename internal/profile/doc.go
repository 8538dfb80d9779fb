// Package profile finds where a redis-server spends its time: on-CPU call
// stacks sampled by Linux perf (Record), read into folded stacks (Profile),
// summarised as top functions split user/kernel (Top), drawn as a
// self-contained flame graph SVG (WriteFlameSVG) and compared between two
// runs (Diff, WriteDiffFlameSVG); and a cheap breakdown of a run from two
// /proc snapshots (StartBreakdown): per-CPU user/sys/irq/softirq/idle,
// the server's threads' CPU, context switches, migrations, run-queue wait,
// and NET_RX/NET_TX softirqs per CPU.
//
// The package knows nothing of flags or stdout: it returns values and
// writes to the io.Writers it is given.
package profile
