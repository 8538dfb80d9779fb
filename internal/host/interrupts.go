package host

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// /proc/interrupts has a header naming the online CPUs' columns, then a
// line per IRQ: counts per column, the chip, the hardware IRQ with the
// flow handler (x86) or the trigger (arm64), and the actions' names.
//
//	           CPU0       CPU1
//	 38:          0       2042 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0
//	 11:       5123       4911     GICv3  27 Level     arch_timer
//	 75:          0          0  IR-PCI-MSI 1048576-edge      eth0-TxRx-0
//	 25:    1    103  Hyper-V PCIe MSI 4138200989697-edge      mana_q0@pci:7870:00:00.0
//	NMI:          0          0   Non-maskable interrupts
//	ERR:          0
func readInterrupts(r *reader) error {
	data, ok := r.file("/proc/interrupts")
	if !ok {
		return nil
	}
	in, err := parseInterrupts(data)
	in.DefaultAffinity = r.snap.Interrupts.DefaultAffinity
	r.snap.Interrupts = in
	return inFile(err, "/proc/interrupts")
}

// ParseInterrupts parses /proc/interrupts, for readers that sample it
// alone (the lab's per-run breakdown); Read fills Snapshot.Interrupts
// with the same parser.
func ParseInterrupts(data []byte) (Interrupts, error) { return parseInterrupts(data) }

// parseInterrupts parses /proc/interrupts. A malformed line is skipped and
// reported (the first one) in the error; the other lines are still parsed.
func parseInterrupts(data []byte) (Interrupts, error) {
	in := Interrupts{IRQs: []IRQ{}}
	header, rest, _ := bytes.Cut(data, []byte("\n"))
	cpus, err := parseInterruptHeader(string(header))
	if err != nil {
		return in, &ParseError{Line: 1, Err: err}
	}
	in.CPUs = cpus
	var first error
	for line := 2; len(rest) > 0; line++ {
		var l []byte
		l, rest, _ = bytes.Cut(rest, []byte("\n"))
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		if err := in.addLine(string(l), len(cpus)); err != nil && first == nil {
			first = &ParseError{Line: line, Err: err}
		}
	}
	sort.SliceStable(in.IRQs, func(i, j int) bool { return in.IRQs[i].Number < in.IRQs[j].Number })
	return in, first
}

// parseInterruptHeader reads "CPU0 CPU1 CPU4 ..." into CPU numbers.
func parseInterruptHeader(h string) ([]int, error) {
	fields := strings.Fields(h)
	if len(fields) == 0 {
		return nil, fmt.Errorf("header %q names no CPU column", clip(h))
	}
	cpus := make([]int, 0, len(fields))
	for _, f := range fields {
		n, ok := strings.CutPrefix(f, "CPU")
		id, err := strconv.Atoi(n)
		if !ok || err != nil || id < 0 || id >= MaxCPUs {
			return nil, fmt.Errorf("header column %q is not CPUn", clip(f))
		}
		cpus = append(cpus, id)
	}
	return cpus, nil
}

// addLine parses one IRQ or counter line.
func (in *Interrupts) addLine(l string, ncol int) error {
	label, tail, ok := strings.Cut(l, ":")
	label = strings.TrimSpace(label)
	if !ok || label == "" || strings.ContainsAny(label, " \t") {
		return fmt.Errorf("line %q has no \"LABEL:\"", clip(l))
	}
	counts, tail, err := parseCounts(tail, ncol)
	if err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	num, err := strconv.Atoi(label)
	if err != nil {
		in.Counters = append(in.Counters, InterruptCounter{Name: label, Counts: counts, Description: strings.TrimSpace(tail)})
		return nil
	}
	if num < 0 || len(counts) != ncol {
		return fmt.Errorf("IRQ %s has %d counts for %d CPU columns", label, len(counts), ncol)
	}
	irq := IRQ{Number: num, Counts: counts}
	for _, c := range counts {
		irq.Total += c
	}
	irq.Chip, irq.HWIRQ, irq.Trigger, irq.Name = parseIRQTail(tail)
	in.IRQs = append(in.IRQs, irq)
	return nil
}

// parseCounts reads up to ncol decimal counts and returns the rest.
func parseCounts(s string, ncol int) ([]uint64, string, error) {
	counts := make([]uint64, 0, ncol)
	i := 0
	for len(counts) < ncol {
		j := skipSpace(s, i)
		k := j
		var v uint64
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			if v > (1<<63)/10 {
				return nil, "", fmt.Errorf("count %q overflows", clip(s[j:]))
			}
			v = v*10 + uint64(s[k]-'0')
			k++
		}
		if k == j || (k < len(s) && s[k] != ' ' && s[k] != '\t') {
			break // not a count: the chip or description starts here
		}
		counts = append(counts, v)
		i = k
	}
	return counts, s[i:], nil
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// nextField returns the field at or after i and the index after it.
func nextField(s string, i int) (string, int) {
	j := skipSpace(s, i)
	k := j
	for k < len(s) && s[k] != ' ' && s[k] != '\t' {
		k++
	}
	return s[j:k], k
}

// parseIRQTail splits "PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0"
// (or "GICv3  27 Level     arch_timer", or the old
// "IR-PCI-MSI-edge      eth0-TxRx-0") into chip, hwirq, trigger and the
// actions' names.
func parseIRQTail(s string) (chip, hwirq, trigger, name string) {
	chip, i := nextField(s, 0)
	if k := chipEnd(s, i); k > i {
		chip, i = strings.TrimSpace(s[:k]), k
	}
	if f, j := nextField(s, i); isHWIRQ(f) {
		hwirq, trigger, _ = strings.Cut(f, "-")
		i = j
	}
	if f, j := nextField(s, i); f == "Edge" || f == "Level" {
		trigger, i = strings.ToLower(f), j
	}
	if f, j := nextField(s, i); strings.HasPrefix(f, "-") && len(f) > 1 {
		if trigger == "" {
			trigger = f[1:]
		}
		i = j // a flow handler name ("-edge", "-virq")
	}
	return chip, hwirq, trigger, strings.TrimSpace(s[i:])
}

// chipEnd returns where a chip name of two or three words ends ("Hyper-V
// PCIe MSI 4138200989697-edge", "SiFive PLIC 131 Edge"): before a hwirq
// that carries its flow handler or is followed by Edge or Level. It
// returns i when the chip is the one word before i.
func chipEnd(s string, i int) int {
	if f, _ := nextField(s, i); isHWIRQ(f) {
		return i
	}
	end := i
	for range 2 {
		_, end = nextField(s, end) // one more word of the chip
		f, j := nextField(s, end)
		if !isHWIRQ(f) {
			continue
		}
		if next, _ := nextField(s, j); strings.Contains(f, "-") || next == "Edge" || next == "Level" {
			return end
		}
	}
	return i
}

// isHWIRQ matches "27", "1048576-edge" and "5-fasteoi".
func isHWIRQ(f string) bool {
	num, handler, _ := strings.Cut(f, "-")
	if num == "" || strings.ContainsFunc(num, func(c rune) bool { return c < '0' || c > '9' }) {
		return false
	}
	return !strings.ContainsFunc(handler, func(c rune) bool { return c < 'a' || c > 'z' })
}

// IRQ returns the IRQ with the given number, or nil.
func (in *Interrupts) IRQ(n int) *IRQ {
	i := sort.Search(len(in.IRQs), func(i int) bool { return in.IRQs[i].Number >= n })
	if i < len(in.IRQs) && in.IRQs[i].Number == n {
		return &in.IRQs[i]
	}
	return nil
}

// Actions returns the names of the IRQ's actions (a shared IRQ has
// several).
func (q *IRQ) Actions() []string {
	if q.Name == "" {
		return nil
	}
	return strings.Split(q.Name, ", ")
}

// CountsByCPU returns the IRQ's counts keyed by CPU number.
func (in *Interrupts) CountsByCPU(q *IRQ) map[int]uint64 {
	out := make(map[int]uint64, len(q.Counts))
	for i, c := range q.Counts {
		if i < len(in.CPUs) {
			out[in.CPUs[i]] = c
		}
	}
	return out
}

// HotCPUs returns the fewest CPUs that received share (0..1) of total,
// the interrupts counted per CPU in by, busiest first (a tie by CPU
// number): share 0 gives the busiest alone, 1 every CPU that received any.
func HotCPUs(by map[int]uint64, total uint64, share float64) []int {
	cpus := make([]int, 0, len(by))
	for c, n := range by {
		if n > 0 {
			cpus = append(cpus, c)
		}
	}
	slices.SortFunc(cpus, func(a, b int) int {
		if by[a] != by[b] {
			return cmp.Compare(by[b], by[a])
		}
		return a - b
	})
	var got uint64
	for i, c := range cpus {
		got += by[c]
		if float64(got) >= share*float64(total) {
			return cpus[:i+1]
		}
	}
	return cpus
}

// CPUShares says where interrupts went, the biggest parts of by first:
// "CPU0 69%, CPU4 31%", at most most of them and then "N more" (CPUs
// that took under half a percent are only counted: "CPU3 100%, 2 more,
// under 1% each"); "no interrupts" when total is 0. The doctor's evidence and inspect's queue
// table say it in these words.
func CPUShares(by map[int]uint64, total uint64, most int) string {
	if total == 0 {
		return "no interrupts"
	}
	hot := HotCPUs(by, total, 1)
	var parts []string
	for i, c := range hot {
		share := 100 * float64(by[c]) / float64(total)
		if i > 0 && share < 0.5 {
			// busiest first: the rest are as small, and "0%" says nothing
			parts = append(parts, fmt.Sprintf("%d more, under 1%% each", len(hot)-i))
			break
		}
		if i == most {
			parts = append(parts, fmt.Sprintf("%d more", len(hot)-most))
			break
		}
		text := fmt.Sprintf("%.0f%%", share)
		if text == "100%" && by[c] != total {
			text = ">99%" // beside "N more": not all of them
		}
		parts = append(parts, fmt.Sprintf("CPU%d %s", c, text))
	}
	return strings.Join(parts, ", ")
}
