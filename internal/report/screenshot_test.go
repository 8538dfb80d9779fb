package report

import (
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"redline/internal/testutil"
)

// TestScreenshots opens a lab report in headless Chromium at 1280x800 and
// 800x800 and checks what a reader sees without scrolling: the change
// chart's green and red marks are on the first screen, and nothing runs
// off the page's right edge (wide tables scroll inside it). make test-deps
// installs Debian's chromium; without it the test is skipped (in CI, fails). Set
// REDLINE_SCREENSHOTS=DIR to keep the screenshots.
func TestScreenshots(t *testing.T) {
	testutil.Need(t, "chromium")
	bin := chromium()
	dir := t.TempDir()
	if keep := os.Getenv("REDLINE_SCREENSHOTS"); keep != "" {
		dir = keep
	}
	page := filepath.Join(dir, "report.html")
	// The v2 fixture has verdicts both ways, so both colours must show.
	if err := os.WriteFile(page, render(t, FromResult(mustLoad(t, "lab-v2.json").Result, "lab-v2.json"), HTML), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{1280, 800} {
		shot := filepath.Join(dir, fmt.Sprintf("report-%d.png", width))
		img := screenshot(t, bin, page, shot, width, 800)
		for name, c := range map[string][3]uint8{"green (helps)": {0x1a, 0x7f, 0x37}, "red (hurts)": {0xc6, 0x28, 0x28}} {
			if n := countColour(img, c, img.Bounds().Dy()); n < 20 {
				t.Errorf("%d px wide: %d %s pixels on the first screen, want the change chart there", width, n, name)
			}
		}
		if n := inkAtRightEdge(img); n > 0 {
			t.Errorf("%d px wide: %d pixels of content at the right edge: something overflows the page", width, n)
		}
	}
}

func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// screenshot renders page at w x h. The page loads nothing from the
// network (it is self-contained), so the browser runs offline.
func screenshot(t *testing.T, bin, page, out string, w, h int) image.Image {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--no-first-run", "--disable-extensions", "--proxy-server=127.0.0.1:9", "--user-data-dir="+filepath.Join(t.TempDir(), "profile"),
		fmt.Sprintf("--window-size=%d,%d", w, h), "--screenshot="+out, "file://"+page)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, b)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// countColour counts pixels within a small distance of c in the top rows.
func countColour(img image.Image, c [3]uint8, rows int) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Min.Y+rows && y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(r>>8, c[0]) && near(g>>8, c[1]) && near(bl>>8, c[2]) {
				n++
			}
		}
	}
	return n
}

func near(v uint32, want uint8) bool {
	d := int(v) - int(want)
	return d > -24 && d < 24
}

// inkAtRightEdge counts non-white pixels in the rightmost 3 columns.
func inkAtRightEdge(img image.Image) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Max.X - 3; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 < 240 || g>>8 < 240 || bl>>8 < 240 {
				n++
			}
		}
	}
	return n
}
