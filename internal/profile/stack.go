package profile

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Frame is one function in a call stack.
type Frame struct {
	Name   string `json:"name"`
	Kernel bool   `json:"kernel,omitempty"`
}

// kernelSuffix marks kernel frames in folded stacks, as flamegraph.pl's
// stackcollapse-perf.pl --kernel does.
const kernelSuffix = "_[k]"

// folded is the frame's name in a folded line.
func (f Frame) folded() string {
	if f.Kernel {
		return f.Name + kernelSuffix
	}
	return f.Name
}

func parseFoldedFrame(s string) Frame {
	if name, ok := strings.CutSuffix(s, kernelSuffix); ok {
		return Frame{Name: name, Kernel: true}
	}
	return Frame{Name: s}
}

// Stack is a call stack, root first, and how many samples ended in it.
type Stack struct {
	Frames []Frame `json:"frames"`
	Count  int64   `json:"count"`
}

// Profile is a set of sampled stacks, merged (one Stack per distinct
// path) and sorted by their folded text so that output is deterministic.
type Profile struct {
	Stacks []Stack `json:"stacks"`
}

// Samples is the number of samples in p.
func (p *Profile) Samples() int64 {
	var n int64
	for _, s := range p.Stacks {
		n += s.Count
	}
	return n
}

// foldedKey is a stack's folded text without the count.
func foldedKey(frames []Frame) string {
	var b strings.Builder
	for i, f := range frames {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(f.folded())
	}
	return b.String()
}

// newProfile merges stacks with the same path and sorts them.
func newProfile(stacks []Stack) *Profile {
	byKey := map[string]int{}
	var out []Stack
	for _, s := range stacks {
		if len(s.Frames) == 0 || s.Count <= 0 {
			continue
		}
		k := foldedKey(s.Frames)
		if i, ok := byKey[k]; ok {
			out[i].Count += s.Count
			continue
		}
		byKey[k] = len(out)
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return foldedKey(out[i].Frames) < foldedKey(out[j].Frames) })
	return &Profile{Stacks: out}
}

// WriteFolded writes p as folded stacks, one "root;...;leaf COUNT" line a
// stack, the format flamegraph.pl and speedscope read. Kernel frames end
// in "_[k]".
func (p *Profile) WriteFolded(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, s := range p.Stacks {
		fmt.Fprintf(bw, "%s %d\n", foldedKey(s.Frames), s.Count)
	}
	return bw.Flush()
}

// ParseFolded reads folded stacks ("a;b;c 12" lines; blank lines
// skipped) into a Profile.
//
//	redis-server;main;aeMain;aeProcessEvents;readQueryFromClient 7
//	redis-server;read;entry_SYSCALL_64_after_hwframe_[k];ksys_read_[k] 3
func ParseFolded(r io.Reader) (*Profile, error) {
	var stacks []Stack
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		i := strings.LastIndexByte(text, ' ')
		if i <= 0 {
			return nil, fmt.Errorf("folded line %d: no \"STACK COUNT\" in %q", line, clip(text))
		}
		n, err := strconv.ParseInt(text[i+1:], 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("folded line %d: count %q is not a number", line, clip(text[i+1:]))
		}
		var frames []Frame
		for _, f := range strings.Split(strings.TrimSpace(text[:i]), ";") {
			frames = append(frames, parseFoldedFrame(f))
		}
		stacks = append(stacks, Stack{Frames: frames, Count: n})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("folded stacks: %w", err)
	}
	return newProfile(stacks), nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
