package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"redline/internal/atomicfile"
	"strings"

	"github.com/spf13/cobra"

	"redline/internal/report"
)

func init() { register(newReportCmd) }

// reportFlags are redline report's options.
type reportFlags struct {
	format, out, by, baseline string
	json                      bool
}

func newReportCmd(s *streams) *cobra.Command {
	f := &reportFlags{}
	cmd := &cobra.Command{
		Use:   "report FILE[=LABEL]... [--format md|html|csv|json] [-o OUT] [--by LABEL]",
		Short: "Render a lab result, or merge results from several runs or hosts into one comparison",
		Long:  reportLong(),
		Example: `  redline report lab.json                                  # Markdown to stdout
  redline report lab.json -o report.html                   # one self-contained HTML file
  redline report lab.json --format csv -o runs.csv         # every run, one row each
  redline report 3.10.json=3.10 4.19.json=4.19 5.4.json=5.4 6.9.json=6.9 --by kernel
  redline report results/kernel-*.json --by kernel         # labels from the names: kernel-5.4.json
  redline report host-a.json host-b.json --by host.kernel  # labels from the files
  redline report eth.json=10GbE rdma.json=RDMA --by bench.payload_bytes -o sizes.html`,
		Args:              cobra.ArbitraryArgs,
		DisableAutoGenTag: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(s, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "", "md, html, csv, json or curves (CSV of bench --slo curves) (default: from -o's extension, else md)")
	fl.BoolVar(&f.json, "json", false, "JSON: the same as --format json")
	fl.StringVarP(&f.out, "output", "o", "", "write to `OUT` (atomically) instead of standard output")
	fl.StringVar(&f.by, "by", "", "what the columns compare: a field such as host.kernel, or a name for the FILE=LABEL labels")
	fl.StringVar(&f.baseline, "baseline", "", "the `LABEL` others are compared with (default: the lab's baseline, else the first label)")
	return cmd
}

func reportLong() string {
	var b strings.Builder
	b.WriteString(`report renders what redline lab and redline bench -o FILE saved.

One lab result: its host, target, doctor findings, each variant's exact plan and
what happened to it, per workload the median throughput and p99 with min..max,
the ratio to the baseline with an exact rank interval and a verdict that
claims a change only when the interval excludes 1, latency percentiles from the
runs' HDR histograms merged (never averaged), every run, and the provenance.

Several files (lab results and bench documents, mixed as you like) are merged
into one table: the columns are labels, the rows workloads; runs sharing a
label and a row are pooled as repetitions. The labels come from:
  FILE=LABEL        an explicit label per file; --by then names the column
                    (e.g. --by kernel)
  --by NAME         a bare name also finds NAME-VALUE in file names
                    (kernel-5.4.json gives 5.4)
  --by FIELD        a field read from every run:
`)
	for _, f := range report.Fields() {
		k, doc, _ := strings.Cut(f, "\t")
		fmt.Fprintf(&b, "                      %-24s %s\n", k, doc)
	}
	b.WriteString(`Without --by, each file's label (or its name) is the column. With --by FIELD,
explicit labels become part of the rows instead (e.g. the network path).

Exit status: 0 written; 1 the output could not be written; 2 bad input (a file
that is not a redline results file, an unknown field or format, an -o that
cannot be written, checked before anything is read).`)
	return b.String()
}

func runReport(s *streams, f *reportFlags, args []string) error {
	format, err := f.outputFormat()
	if err != nil {
		return usageError("redline report: %v", err)
	}
	if err := checkOutputs("report", fileOutput("-o", f.out)); err != nil {
		return err
	}
	srcs, err := loadSources(s.in, args)
	if err != nil {
		return usageError("redline report: %v", err)
	}
	if report.IsFleet(srcs) {
		return runFleetReport(s, f, srcs, format)
	}
	r, err := buildReport(srcs, f)
	if err != nil {
		return usageError("redline report: %v", err)
	}
	var b bytes.Buffer
	if err := report.Write(&b, r, format); err != nil {
		return exitCode(ExitFailure, "redline report: "+err.Error())
	}
	if err := f.write(s, b.Bytes()); err != nil {
		return exitCode(ExitFailure, "redline report: "+err.Error())
	}
	return nil
}

// outputFormat is --format, else the extension of -o, else Markdown.
func (f *reportFlags) outputFormat() (report.Format, error) {
	if f.json && f.format != "" && f.format != "json" {
		return "", fmt.Errorf("--json and --format %s: choose one", f.format)
	}
	if f.json {
		return report.JSON, nil
	}
	if f.format != "" {
		return report.ParseFormat(f.format)
	}
	if ext := filepath.Ext(f.out); ext != "" {
		if ft, err := report.ParseFormat(ext); err == nil {
			return ft, nil
		}
		return "", fmt.Errorf("-o %s: cannot tell the format from %q; add --format md, html, csv or json", f.out, ext)
	}
	return report.Markdown, nil
}

// loadSources reads every FILE[=LABEL]; "-" reads standard input.
func loadSources(stdin io.Reader, args []string) ([]*report.Source, error) {
	if len(args) == 0 {
		return nil, errors.New("no results file given; usage: redline report FILE[=LABEL]... (see redline report --help)")
	}
	seen := map[string]bool{}
	var srcs []*report.Source
	for _, arg := range args {
		path, label, err := splitLabel(arg)
		if err != nil {
			return nil, err
		}
		if seen[filepath.Clean(path)] {
			return nil, fmt.Errorf("%s: given twice (its runs would count twice)", path)
		}
		seen[filepath.Clean(path)] = true
		src, err := loadSource(stdin, path)
		if err != nil {
			return nil, err
		}
		src.Label = label
		srcs = append(srcs, src)
	}
	return srcs, nil
}

// splitLabel splits FILE=LABEL at the last "=", unless the whole argument
// names an existing file.
func splitLabel(arg string) (path, label string, err error) {
	if _, statErr := os.Stat(arg); statErr == nil || arg == "-" {
		return arg, "", nil
	}
	i := strings.LastIndex(arg, "=")
	if i <= 0 {
		return arg, "", nil
	}
	path, label = arg[:i], strings.TrimSpace(arg[i+1:])
	if label == "" {
		return "", "", fmt.Errorf("%s: empty label after '='; write FILE=LABEL", arg)
	}
	return path, label, nil
}

func loadSource(stdin io.Reader, path string) (*report.Source, error) {
	if path == "-" {
		return report.Decode("(stdin)", stdin)
	}
	return report.Load(path)
}

// buildReport renders one lab result in full, or merges.
func buildReport(srcs []*report.Source, f *reportFlags) (*report.Report, error) {
	single := len(srcs) == 1 && srcs[0].Result != nil
	if single && (f.by == "" || f.by == "variant") && f.baseline == "" {
		return report.FromResult(srcs[0].Result, srcs[0].Path), nil
	}
	by := f.by
	if by == "" && single {
		by = "variant"
	}
	return report.Merge(srcs, report.MergeOptions{By: by, Reference: f.baseline})
}

// write puts the report on stdout, or atomically into -o.
func (f *reportFlags) write(s *streams, b []byte) error {
	if f.out == "" || f.out == "-" {
		_, err := s.out.Write(b)
		return err
	}
	if err := atomicfile.Write(f.out, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(s.err, "redline report: wrote %s\n", f.out)
	return nil
}
