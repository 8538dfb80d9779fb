package textsafe

import (
	"html"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"redline/internal/testutil"
)

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"a\tb\nc":              "a\tb\nc",
		"\x1b[31mX\x1b[0m\r":   `\x1b[31mX\x1b[0m\r`,
		"ok \u202etxt.exe":     `ok \u202etxt.exe`,
		"bad \xff utf8":        `bad \xff utf8`,
		"10.0.0.1:7001 (über)": "10.0.0.1:7001 (über)",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// hostile are values a host, a server or someone's scenario could hand a
// Markdown report: HTML, backticks, table pipes, line breaks, controls,
// and every other mark Markdown acts on.
var hostile = []string{
	"<script>alert(1)</script>", "3 < 4 <0.1%", "<?php x ?>", "<![CDATA[x]]>", "<img src=x onerror=alert(1)>", "<!-- c -->", "<http://evil.example>",
	"a`b``c", "`", "``", "```", "` x `", "| x | y |", "a|b", "a\\|b", "line1\nline2", "cr\r\nlf", "tab\tx",
	"\x1b[31mred\x1b[0m", "bidi \u202e txt", "bad \xff utf8", "*bold* _it_ __b__ **s**", "[link](http://evil.example)",
	"![img](x.png)", "[ref]: http://evil.example", "see [ref][x]", "[always] madvise never", "fn[^1]", "# heading", "   ## indented", "- item", "+ item", "* item", "1. item", "12) item", "> quote",
	"&amp; &lt; &#x3C;", "see http://evil.example/x and www.evil.example", "javascript:alert(1)", "~~strike~~", "snake_case_name", "_lead", "trail_", "a\\b", "\\", "===", "---", "- - -",
	" lead space", "trail space ", "-3.2%", "1.2x", "", "plain",
}

func TestMarkdownText(t *testing.T) {
	for in, want := range map[string]string{
		"<script>alert(1)</script>": `\<script>alert(1)\</script>`,
		"> quote, a >= b":           `\> quote, a >= b`,
		"THP [always] madvise":      "THP [always] madvise",
		"[x](http://e) ![i][r]":     `\[x\](http\://e) ![i\][r]`,
		"a|b\nc":                    `a\|b c`,
		"x`y":                       "x\\`y",
		"snake_case_name":           "snake_case_name",
		"_lead and trail_":          `\_lead and trail\_`,
		"# h":                       `\# h`,
		"- item":                    `\- item`,
		"-3.2%":                     "-3.2%",
		"1. item":                   `1\. item`,
		"1.2x":                      "1.2x",
		"\x1b[31m":                  `\\x1b[31m`,
	} {
		if got := MarkdownText(in); got != want {
			t.Errorf("MarkdownText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMarkdownCode(t *testing.T) {
	for in, want := range map[string]string{
		"":        "",
		"redis":   "`redis`",
		"a`b":     "``a`b``",
		"`x":      "`` `x ``",
		"a``b`c":  "```a``b`c```",
		"a|b":     "`a\\|b`",
		"l1\nl2":  "`l1 l2`",
		"<b>":     "`<b>`",
		"\x1b[0m": "`\\x1b[0m`",
	} {
		if got := MarkdownCode(in); got != want {
			t.Errorf("MarkdownCode(%q) = %q, want %q", in, got, want)
		}
	}
	if f := MarkdownFence("echo ```", "x"); f != "````" {
		t.Errorf("MarkdownFence = %q", f)
	}
}

// TestMarkdownRendered renders the escaped hostile values with a GFM
// renderer (cmark-gfm, raw HTML allowed, as a careless viewer would)
// in a paragraph, a list item, a heading and a two-column table, and
// checks that each shows its value as text: no element the value made,
// the table still two columns, the text (and the code span's) the
// value's, line breaks as spaces and controls escaped.
func TestMarkdownRendered(t *testing.T) {
	cmark := testutil.NeedPath(t, "cmark-gfm")
	for _, v := range hostile {
		want := oneLine(v)
		text, code := MarkdownText(v), MarkdownCode(v)
		doc := "para " + text + "\n\n- item " + text + "\n\n## head " + text + "\n\n| a | b |\n|---|---|\n| " + text + " | " + code + " |\n"
		cmd := exec.Command(cmark, "--unsafe", "-e", "table", "-e", "strikethrough", "-e", "autolink")
		cmd.Stdin = strings.NewReader(doc)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		html := string(out)
		for _, tc := range []struct{ re, what string }{
			{`(?s)<p>para ?(.*?)</p>`, "paragraph"},
			{`(?s)<li>item ?(.*?)</li>`, "list item"},
			{`(?s)<h2>head ?(.*?)</h2>`, "heading"},
			{`(?s)<tbody>\s*<tr>\s*<td>(.*?)</td>`, "table cell"},
		} {
			m := regexp.MustCompile(tc.re).FindStringSubmatch(html)
			if m == nil {
				t.Errorf("%q: no %s in\n%s", v, tc.what, html)
				continue
			}
			if strings.Contains(m[1], "<") {
				t.Errorf("%q: the %s holds markup: %s", v, tc.what, m[1])
			}
			if got := unescapeHTML(m[1]); strings.TrimSpace(got) != strings.TrimSpace(want) {
				t.Errorf("%q: the %s shows %q, want %q", v, tc.what, got, want)
			}
		}
		rows := regexp.MustCompile(`(?s)<tbody>(.*?)</tbody>`).FindStringSubmatch(html)
		if rows == nil || strings.Count(rows[1], "<td") != 2 || strings.Count(rows[1], "<tr>") != 1 {
			t.Errorf("%q: the table is no longer one row of two cells:\n%s", v, html)
			continue
		}
		if want == "" {
			continue
		}
		m := regexp.MustCompile(`(?s)<td><code>(.*?)</code></td>`).FindStringSubmatch(rows[1])
		if m == nil || unescapeHTML(m[1]) != want {
			t.Errorf("%q: the code span in the table: %q, want %q (%s)", v, m, want, rows[1])
		}
	}
}

func unescapeHTML(s string) string { return html.UnescapeString(s) }
