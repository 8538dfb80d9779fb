package profile

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
)

// perf script output (perf script -F comm,tid,ip,sym,dso; the default
// format's header carries more fields, which are ignored): a header line
// per sample, then its frames leaf first, one a line, indented; a blank
// line ends the sample.
//
//	redis-server 12529
//		ffffffff8212ea54 unix_stream_read_generic ([kernel.kallsyms])
//		ffffffff81000130 entry_SYSCALL_64_after_hwframe+0x76 ([kernel.kallsyms])
//		           f82ec read (/usr/lib/x86_64-linux-gnu/libc.so.6)
//		          13bfa0 [unknown] (/usr/bin/redis-check-rdb)

// userBracketDSOs are perf's bracketed mapping names that are not kernel
// code.
var userBracketDSOs = map[string]bool{
	"[unknown]": true, "[vdso]": true, "[vsyscall]": true, "[heap]": true,
	"[stack]": true, "[anon]": true, "[uprobes]": true, "[JIT] tid": true,
}

// kernelSpace is where x86-64 and arm64 kernels map their text.
const kernelSpace = 0xffff800000000000

// ParsePerfScript reads perf script output into a Profile: one sample a
// stack, rooted at the thread's name (comm), so a flame graph splits
// first by thread. Unsymbolized frames become "[unknown]" or "[DSO]",
// and a run of the same unknown frame (a user stack perf could not
// unwind) is kept once.
func ParsePerfScript(r io.Reader) (*Profile, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	var stacks []Stack
	var cur []Frame // leaf first
	var comm string
	flush := func() {
		if comm != "" {
			stacks = append(stacks, Stack{Frames: rootFirst(comm, cur), Count: 1})
		}
		comm, cur = "", nil
	}
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		switch {
		case strings.TrimSpace(text) == "":
			flush()
		case text[0] != ' ' && text[0] != '\t':
			flush()
			comm = parseScriptHeader(text)
		case comm == "":
			return nil, fmt.Errorf("perf script line %d: a frame before any sample header: %q", line, clip(text))
		default:
			f, err := parseScriptFrame(text)
			if err != nil {
				return nil, fmt.Errorf("perf script line %d: %w", line, err)
			}
			if n := len(cur); n > 0 && isUnknown(f) && cur[n-1] == f {
				continue
			}
			cur = append(cur, f)
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("perf script: %w", err)
	}
	return newProfile(stacks), nil
}

func isUnknown(f Frame) bool { return strings.HasPrefix(f.Name, "[") }

// rootFirst reverses a leaf-first stack under the thread's name.
func rootFirst(comm string, leafFirst []Frame) []Frame {
	out := make([]Frame, 0, len(leafFirst)+1)
	out = append(out, Frame{Name: comm})
	for i := len(leafFirst) - 1; i >= 0; i-- {
		out = append(out, leafFirst[i])
	}
	return out
}

// parseScriptHeader returns the sample's comm: the text before the
// first numeric field (the pid or tid; comm may hold spaces).
func parseScriptHeader(text string) string {
	fields := strings.Fields(text)
	for i, f := range fields {
		if i > 0 && isTID(f) {
			return sanitize(strings.Join(fields[:i], " "))
		}
	}
	return sanitize(strings.Join(fields, " "))
}

func isTID(s string) bool {
	for _, part := range strings.SplitN(s, "/", 2) {
		if _, err := strconv.ParseUint(part, 10, 32); err != nil {
			return false
		}
	}
	return true
}

// parseScriptFrame parses "ADDR SYM[+0xOFF] (DSO)".
func parseScriptFrame(text string) (Frame, error) {
	text = strings.TrimSpace(text)
	addrText, rest, ok := strings.Cut(text, " ")
	addr, err := strconv.ParseUint(addrText, 16, 64)
	if !ok || err != nil {
		return Frame{}, fmt.Errorf("no \"ADDR SYMBOL (DSO)\" in %q", clip(text))
	}
	sym, dso := strings.TrimSpace(rest), ""
	if i := strings.LastIndex(sym, " ("); i >= 0 && strings.HasSuffix(sym, ")") {
		sym, dso = strings.TrimSpace(sym[:i]), sym[i+2:len(sym)-1]
	}
	sym = stripOffset(sym)
	kernel := dso == "[kernel.kallsyms]" || addr >= kernelSpace ||
		(strings.HasPrefix(dso, "[") && !userBracketDSOs[dso])
	if sym == "" || sym == "[unknown]" {
		sym = "[unknown]"
		if dso != "" && dso != "[unknown]" {
			base := strings.Trim(path.Base(dso), "[]")
			if alias, ok := dsoAliases[base]; ok {
				base = alias
			}
			sym = "[" + base + "]"
		}
	}
	return Frame{Name: sanitize(sym), Kernel: kernel}, nil
}

// stripOffset drops a "+0x1f" symbol offset.
func stripOffset(sym string) string {
	i := strings.LastIndex(sym, "+0x")
	if i <= 0 {
		return sym
	}
	if _, err := strconv.ParseUint(sym[i+3:], 16, 64); err != nil {
		return sym
	}
	return sym[:i]
}

// sanitize keeps a name from breaking the folded format (";" separates
// frames, the last space the count).
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ';':
			return ':'
		case '\n', '\r', '\t', ' ':
			return '_'
		}
		return r
	}, s)
}
