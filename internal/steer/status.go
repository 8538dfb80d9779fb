package steer

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"redline/internal/atomicfile"
	"sort"
	"strconv"
	"text/tabwriter"
)

// DefaultStatusFile is where a running steer keeps its current map.
const DefaultStatusFile = "/run/redline/steer.json"

// WriteStatus replaces path with r as JSON (write to a temporary file in
// the same directory, then rename, so a reader never sees half of it).
func WriteStatus(path string, r *Report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'), 0)
}

// ReadStatus reads a status file.
func ReadStatus(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// PrintStatus writes the map of a report: one line per queue IRQ with
// where it is delivered, its packets per node and the preferred node.
func PrintStatus(w io.Writer, r *Report) error {
	mode := "active"
	if r.DryRun {
		mode = "dry-run"
	}
	fmt.Fprintf(w, "steer %s, last period %s; sampler %d events, %d lost, %.2f%% of a CPU\n",
		mode, r.Time.Format("2006-01-02 15:04:05"), r.Sampler.Events, r.Sampler.Lost, 100*r.SamplerCPU)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	by, prefix := "NODE", "n"
	if r.Domain == DomainLLC {
		by, prefix = "LLC", "llc"
	}
	fmt.Fprintf(tw, "DEV\tQUEUE\tIRQ\tON CPU\tPACKETS BY %s\tPREFERRED\tSTREAK\tNOTE\n", by)
	qs := append([]QueueState(nil), r.Decision.Queues...)
	sort.Slice(qs, func(i, j int) bool {
		if qs[i].Queue.Dev != qs[j].Queue.Dev {
			return qs[i].Queue.Dev < qs[j].Queue.Dev
		}
		return qs[i].Queue.Queue < qs[j].Queue.Queue
	})
	for _, q := range qs {
		pref, note := "-", ""
		if q.Preferred != nil {
			pref = strconv.Itoa(*q.Preferred)
		}
		if q.Drifted {
			note = "drift: changed by someone else, left alone"
		}
		fmt.Fprintf(tw, "%s\trx-%d\t%d\t%s\t%s\t%s\t%d\t%s\n", q.Queue.Dev, q.Queue.Queue, q.IRQ, q.On.List(), perNode(q.PerNode, prefix), pref, q.Streak, note)
	}
	return tw.Flush()
}

func perNode(m map[int]uint64, prefix string) string {
	if len(m) == 0 {
		return "-"
	}
	nodes := make([]int, 0, len(m))
	for n := range m {
		nodes = append(nodes, n)
	}
	sort.Ints(nodes)
	s := ""
	for i, n := range nodes {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%s%d=%d", prefix, n, m[n])
	}
	return s
}
