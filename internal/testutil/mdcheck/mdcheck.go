// Package mdcheck checks a Markdown report made from hostile values: its
// tables keep their columns, and, where cmark-gfm is installed (make
// test-deps), the HTML a GFM viewer makes of it (raw HTML allowed, as a
// careless viewer would) holds no element but the report's own kinds, no
// link but to the report's own files, and tables whose rows all have
// their header's cells.
package mdcheck

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"redline/internal/testutil"
)

// Check checks md (see the package comment).
func Check(t testing.TB, md string) {
	t.Helper()
	checkTables(t, md)
	if !testutil.Has(t, "cmark-gfm") {
		t.Log("cmark-gfm not installed: the rendered HTML is not checked")
		return
	}
	cmark, _ := exec.LookPath("cmark-gfm")
	cmd := exec.Command(cmark, "--unsafe", "-e", "table", "-e", "strikethrough", "-e", "autolink")
	cmd.Stdin = strings.NewReader(md)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	html := string(out)
	for _, m := range tagRE.FindAllStringSubmatch(html, -1) {
		if !allowed[strings.ToLower(m[1])] {
			t.Errorf("the rendered report holds a <%s> element a value made: %s", m[1], context(html, m[0]))
		}
	}
	for _, m := range hrefRE.FindAllStringSubmatch(html, -1) {
		if !strings.HasPrefix(m[1], "./") {
			t.Errorf("the rendered report links outside its own files: %s", m[0])
		}
	}
	for _, tbl := range tableRE.FindAllString(html, -1) {
		cols := len(cellRE.FindAllString(thRE.FindString(tbl), -1))
		for _, row := range trRE.FindAllString(tbl, -1) {
			if strings.Contains(row, "<th") {
				continue
			}
			if n := len(cellRE.FindAllString(row, -1)); n != cols {
				t.Errorf("a table row has %d cells, its header %d: %s", n, cols, row)
			}
		}
	}
}

var (
	tagRE   = regexp.MustCompile(`<([A-Za-z][A-Za-z0-9]*)`)
	hrefRE  = regexp.MustCompile(`<a href="([^"]*)"`)
	tableRE = regexp.MustCompile(`(?s)<table>.*?</table>`)
	thRE    = regexp.MustCompile(`(?s)<thead>.*?</thead>`)
	trRE    = regexp.MustCompile(`(?s)<tr>.*?</tr>`)
	cellRE  = regexp.MustCompile(`<t[hd][ >]`)
	allowed = map[string]bool{
		"p": true, "h1": true, "h2": true, "h3": true, "h4": true, "ul": true, "ol": true, "li": true,
		"table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true, "code": true, "pre": true,
		"strong": true, "em": true, "blockquote": true, "a": true, "hr": true,
	}
)

func context(s, sub string) string {
	i := strings.Index(s, sub)
	return s[max(0, i-80):min(len(s), i+len(sub)+80)]
}

// checkTables checks that every row of every table has as many
// unescaped pipes (GFM's column separators, inside code spans too) as
// the table's header row.
func checkTables(t testing.TB, md string) {
	t.Helper()
	lines := strings.Split(md, "\n")
	for i := 0; i+1 < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "|") || !delimRE.MatchString(lines[i+1]) {
			continue
		}
		want := pipes(lines[i])
		j := i + 1
		for ; j < len(lines) && strings.HasPrefix(lines[j], "|"); j++ {
			if n := pipes(lines[j]); n != want {
				t.Errorf("table row %q has %d column separators, its header %d", lines[j], n, want)
			}
		}
		i = j - 1
	}
}

var delimRE = regexp.MustCompile(`^\|(\s*:?-+:?\s*\|)+\s*$`)

func pipes(line string) int {
	n := 0
	for i := 0; i < len(line); i++ {
		if line[i] == '\\' {
			i++
			continue
		}
		if line[i] == '|' {
			n++
		}
	}
	return n
}
