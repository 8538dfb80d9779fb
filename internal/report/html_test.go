package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
)

// The HTML is written so that it is also well-formed XML (void elements
// closed, attributes quoted, only XML's own entities), which lets the
// tests parse it strictly with the standard library.

// htmlPage is what the structure checks need from a parsed page.
type htmlPage struct {
	count    map[string]int      // elements by name
	ids      map[string]bool     // id attributes
	attrs    map[string][]string // attribute values by attribute name
	text     strings.Builder
	svgTitle int // <title> inside <svg>
}

func parsePage(t *testing.T, b []byte) *htmlPage {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	p := &htmlPage{count: map[string]int{}, ids: map[string]bool{}, attrs: map[string][]string{}}
	var stack []string
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("HTML is not well-formed: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			p.start(tok, stack)
			stack = append(stack, tok.Name.Local)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			p.text.Write(tok)
		}
	}
	if len(stack) != 0 {
		t.Fatalf("unclosed elements: %v", stack)
	}
	return p
}

func (p *htmlPage) start(e xml.StartElement, stack []string) {
	p.count[e.Name.Local]++
	if e.Name.Local == "title" && len(stack) > 0 && stack[len(stack)-1] == "svg" {
		p.svgTitle++
	}
	for _, a := range e.Attr {
		p.attrs[a.Name.Local] = append(p.attrs[a.Name.Local], a.Value)
		if a.Name.Local == "id" {
			p.ids[a.Value] = true
		}
	}
}

func TestHTMLStructure(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			r := c.build(t)
			p := parsePage(t, render(t, r, HTML))
			checkSelfContained(t, p)
			checkSections(t, p, r)
			checkCharts(t, p, r)
		})
	}
}

// checkSelfContained: nothing is fetched from anywhere, so the file opens
// offline.
func checkSelfContained(t *testing.T, p *htmlPage) {
	t.Helper()
	for _, el := range []string{"script", "link", "img", "iframe", "object", "embed"} {
		if p.count[el] > 0 {
			t.Errorf("htmlPage has %d <%s> elements; it must be self-contained", p.count[el], el)
		}
	}
	if p.count["style"] != 1 {
		t.Errorf("htmlPage has %d <style> elements, want the one inline stylesheet", p.count["style"])
	}
	for _, attr := range []string{"src", "href", "xlink:href", "action"} {
		for _, v := range p.attrs[attr] {
			if !strings.HasPrefix(v, "#") {
				t.Errorf("%s=%q points outside the htmlPage", attr, v)
			}
		}
	}
	for _, v := range p.attrs["style"] {
		if strings.Contains(v, "url(") {
			t.Errorf("inline style loads %q", v)
		}
	}
}

func checkSections(t *testing.T, p *htmlPage, r *Report) {
	t.Helper()
	want := []string{"summary", "results", "runs", "provenance"}
	if r.Lab != nil {
		want = append(want, "host", "findings", "variants")
	}
	for _, id := range want {
		if !p.ids[id] {
			t.Errorf("no section id=%q", id)
		}
	}
	for _, href := range p.attrs["href"] {
		if !p.ids[strings.TrimPrefix(href, "#")] {
			t.Errorf("link %s has no target", href)
		}
	}
	text := p.text.String()
	for _, s := range r.Runs {
		if !strings.Contains(text, s.Row) || !strings.Contains(text, s.Label) {
			t.Errorf("run %d's row %q or label %q is missing", s.Index, s.Row, s.Label)
		}
	}
	if !strings.Contains(text, "merged into one") {
		t.Error("the htmlPage does not say percentiles come from merged histograms")
	}
}

// checkCharts: per workload a throughput chart, a change chart when there
// is something to compare, and a percentile chart with a curve per group.
func checkCharts(t *testing.T, p *htmlPage, r *Report) {
	t.Helper()
	svgs, curves := 0, 0
	for _, w := range r.Workloads {
		svgs += 2
		if len(w.Groups) > 1 {
			svgs++
		}
		curves += len(w.Groups)
	}
	if p.count["svg"] != svgs {
		t.Errorf("%d charts, want %d", p.count["svg"], svgs)
	}
	if p.svgTitle != p.count["svg"] {
		t.Errorf("%d of %d charts have a <title>", p.svgTitle, p.count["svg"])
	}
	if p.count["polyline"] != curves {
		t.Errorf("%d percentile curves, want %d (one per group)", p.count["polyline"], curves)
	}
}

func TestHTMLEscapesInput(t *testing.T) {
	res := mustLoad(t, "lab.json").Result
	res.Scenario.Name = `<script>alert("x")</script>`
	res.Findings[0].Title = "a & b <img src=https://example.com/x.png>"
	r := FromResult(res, "lab.json")
	b := render(t, r, HTML)
	p := parsePage(t, b)
	checkSelfContained(t, p)
	if !strings.Contains(p.text.String(), `<script>alert("x")</script>`) {
		t.Error("the scenario name is not shown as text")
	}
}

func TestCodeSpans(t *testing.T) {
	for in, want := range map[string]string{
		"run `redline tune rollback` now": "run <code>redline tune rollback</code> now",
		"a <b> & `x<y`":                   "a &lt;b&gt; &amp; <code>x&lt;y</code>",
		"odd ` tick":                      "odd ` tick",
	} {
		if got := string(codeSpans(in)); got != want {
			t.Errorf("codeSpans(%q) = %q, want %q", in, got, want)
		}
	}
}
