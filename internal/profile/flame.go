package profile

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"math"
	"sort"
	"strings"
)

// FlameOptions shape a flame graph.
type FlameOptions struct {
	Title string // drawn at the top; default "Flame graph"
	Width int    // pixels; default DefaultFlameWidth
}

// Flame graph geometry, in pixels.
const (
	DefaultFlameWidth = 1200
	frameHeight       = 16
	flamePad          = 10
	flameHeader       = 36
	charWidth         = 6.6 // of 11px Verdana, for truncating labels
	minFrameWidth     = 0.3 // narrower frames are left out
)

// node is a frame in the merged call tree.
type node struct {
	frame    Frame
	count    int64
	children []*node
	byFrame  map[Frame]*node
}

func buildTree(p *Profile) *node {
	root := &node{frame: Frame{Name: "all"}}
	for _, s := range p.Stacks {
		n := root
		n.count += s.Count
		for _, f := range s.Frames {
			c := n.byFrame[f]
			if c == nil {
				c = &node{frame: f}
				if n.byFrame == nil {
					n.byFrame = map[Frame]*node{}
				}
				n.byFrame[f] = c
				n.children = append(n.children, c)
			}
			c.count += s.Count
			n = c
		}
	}
	root.sortChildren()
	return root
}

// sortChildren orders children by name (kernel after user on a tie), as
// flamegraph.pl does: position says nothing, width says everything.
func (n *node) sortChildren() {
	sort.Slice(n.children, func(i, j int) bool {
		a, b := n.children[i].frame, n.children[j].frame
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return !a.Kernel && b.Kernel
	})
	for _, c := range n.children {
		c.sortChildren()
	}
}

func (n *node) depth() int {
	d := 0
	for _, c := range n.children {
		d = max(d, c.depth())
	}
	return d + 1
}

// flame draws one graph; colour and title pick each frame's look.
type flame struct {
	w      *bufio.Writer
	width  float64
	height int
	scale  float64 // pixels a sample
	total  int64
	colour func(path string, n *node) string
	title  func(path string, n *node) string
}

// WriteFlameSVG draws p as a self-contained SVG flame graph: no scripts,
// no external fonts or links. Roots (threads) at the bottom; widths are
// shares of samples; user frames warm, kernel frames blue, threads grey;
// hovering a frame shows its name and share.
func WriteFlameSVG(w io.Writer, p *Profile, o FlameOptions) error {
	title := o.Title
	if title == "" {
		title = "Flame graph"
	}
	root := buildTree(p)
	f := newFlame(w, root, o.Width)
	f.colour = frameColour
	f.title = func(_ string, n *node) string {
		return fmt.Sprintf("%s (%d samples, %.2f%%)", n.frame.Name, n.count, pct(n.count, f.total))
	}
	return f.draw(root, title, fmt.Sprintf("%d samples", root.count))
}

func newFlame(w io.Writer, root *node, width int) *flame {
	if width <= 0 {
		width = DefaultFlameWidth
	}
	f := &flame{w: bufio.NewWriter(w), width: float64(width), total: root.count}
	f.height = flameHeader + root.depth()*frameHeight + flamePad
	if root.count > 0 {
		f.scale = (f.width - 2*flamePad) / float64(root.count)
	}
	return f
}

func (f *flame) draw(root *node, title, subtitle string) error {
	fmt.Fprintf(f.w, `<?xml version="1.0" standalone="no"?>
<svg version="1.1" width="%.0f" height="%d" viewBox="0 0 %.0f %d" xmlns="http://www.w3.org/2000/svg">
<style>text{font-family:Verdana,sans-serif;font-size:11px;fill:#000}g:hover rect{stroke:#000;stroke-width:0.5}</style>
<rect x="0" y="0" width="100%%" height="100%%" fill="#f8f8f8"/>
<text x="%.1f" y="20" text-anchor="middle" style="font-size:15px">%s</text>
<text x="%d" y="20" style="fill:#555">%s</text>
`, f.width, f.height, f.width, f.height, f.width/2, esc(title), flamePad, esc(subtitle))
	f.node(root, "", 0, flamePad)
	fmt.Fprintln(f.w, "</svg>")
	return f.w.Flush()
}

// node draws n at depth d from x, then its children above it.
func (f *flame) node(n *node, path string, d int, x float64) {
	width := float64(n.count) * f.scale
	if width < minFrameWidth {
		return
	}
	y := f.height - flamePad - (d+1)*frameHeight
	fmt.Fprintf(f.w, "<g><title>%s</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" rx=\"2\"/>",
		esc(f.title(path, n)), x, y, width, frameHeight-1, f.colour(path, n))
	if label := fitLabel(n.frame.Name, width); label != "" {
		fmt.Fprintf(f.w, "<text x=\"%.1f\" y=\"%d\">%s</text>", x+3, y+frameHeight-4, esc(label))
	}
	fmt.Fprintln(f.w, "</g>")
	for _, c := range n.children {
		cp := path + ";" + c.frame.folded()
		f.node(c, cp, d+1, x)
		x += float64(c.count) * f.scale
	}
}

// fitLabel truncates name to width, with "..", or drops it.
func fitLabel(name string, width float64) string {
	fits := int((width - 6) / charWidth)
	if fits < 3 {
		return ""
	}
	if len(name) <= fits {
		return name
	}
	return name[:fits-2] + ".."
}

func esc(s string) string { return html.EscapeString(s) }

// frameColour is warm for user code, blue for the kernel, grey for the
// thread roots and "all"; the shade comes from the name, so the same
// function has the same colour in every graph.
func frameColour(path string, n *node) string {
	v := nameShade(n.frame.Name)
	switch {
	case n.frame.Kernel:
		return rgb(60+40*v, 130+60*v, 210+40*v)
	case strings.Count(path, ";") <= 1: // "all" is "", a thread ";comm"
		return rgb(180+30*v, 180+30*v, 190+30*v)
	default:
		return rgb(205+50*v, 90+140*v, 40+30*v)
	}
}

func nameShade(name string) float64 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return float64(h.Sum32()%1000) / 1000
}

func rgb(r, g, b float64) string {
	c := func(v float64) int { return int(math.Max(0, math.Min(255, math.Round(v)))) }
	return fmt.Sprintf("rgb(%d,%d,%d)", c(r), c(g), c(b))
}

// WriteDiffFlameSVG draws p's flame graph coloured by how each frame's
// share (its path's samples over all samples) moved from base: red grew,
// blue shrank, white unchanged, the deeper the larger the move. Frames
// only in base are not drawn; Diff lists them.
func WriteDiffFlameSVG(w io.Writer, base, p *Profile, o FlameOptions) error {
	title := o.Title
	if title == "" {
		title = "Differential flame graph"
	}
	baseShare := pathShares(buildTree(base))
	root := buildTree(p)
	share := pathShares(root)
	maxMove := 0.0
	for k, s := range share {
		maxMove = math.Max(maxMove, math.Abs(s-baseShare[k]))
	}
	f := newFlame(w, root, o.Width)
	f.colour = func(path string, _ *node) string { return diffColour(share[path]-baseShare[path], maxMove) }
	f.title = func(path string, n *node) string {
		return fmt.Sprintf("%s (base %.2f%%, now %.2f%%, %+.2f)", n.frame.Name, 100*baseShare[path], 100*share[path], 100*(share[path]-baseShare[path]))
	}
	sub := fmt.Sprintf("%d samples; red grew, blue shrank against the base (%d samples)", root.count, buildTree(base).count)
	return f.draw(root, title, sub)
}

// pathShares maps every path (";"-joined folded frames under "all") to
// its share of the root's samples.
func pathShares(root *node) map[string]float64 {
	out := map[string]float64{}
	var walk func(n *node, path string)
	walk = func(n *node, path string) {
		if root.count > 0 {
			out[path] = float64(n.count) / float64(root.count)
		}
		for _, c := range n.children {
			walk(c, path+";"+c.frame.folded())
		}
	}
	walk(root, "")
	return out
}

func diffColour(move, maxMove float64) string {
	if maxMove == 0 || move == 0 {
		return "rgb(245,245,245)"
	}
	v := math.Abs(move) / maxMove
	if move > 0 {
		return rgb(255, 245-185*v, 245-185*v)
	}
	return rgb(245-185*v, 245-185*v, 255)
}
