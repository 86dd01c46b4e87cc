package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// plotAreas finds, per chart (svg with an id), where it draws its data, in
// page pixels: the rectangle its plot is clipped to, or the whole chart
// when it has none (a bar chart).
const plotAreas = `(() => {
  const doc = document.documentElement.getBoundingClientRect();
  const out = {};
  for (const svg of document.querySelectorAll("svg[id]")) {
    const b = svg.getBoundingClientRect();
    const clip = svg.querySelector("clipPath rect");
    const r = clip ? ["x", "y", "width", "height"].map(k => parseFloat(clip.getAttribute(k))) : [0, 0, b.width, b.height];
    out[svg.id] = {x: b.left - doc.left + r[0], y: b.top - doc.top + r[1], width: r[2], height: r[3], scale: 1};
  }
  return JSON.stringify(out);
})()`

// ink screenshots each chart's plot area and measures the share of its
// pixels in colour. Axes, grid lines, text and reference lines are grey
// and translucent bands pale; only drawn data (lines, dots, bars) is in
// colour.
func (b *Browser) ink(t testing.TB, url string) map[string]float64 {
	t.Helper()
	out, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](plotAreas))
	if err != nil {
		t.Fatalf("plot areas of %s: %v", url, err)
	}
	var areas map[string]page.Viewport
	if err := json.Unmarshal([]byte(out), &areas); err != nil {
		t.Fatalf("plot areas of %s: %v", url, err)
	}
	ink := map[string]float64{}
	for id, area := range areas {
		shot, err := chromedp.Run(b.ctx, capture(area))
		if err != nil {
			t.Fatalf("screenshot of chart %s in %s: %v", id, url, err)
		}
		if ink[id], err = coloured(shot); err != nil {
			t.Fatalf("screenshot of chart %s in %s: %v", id, url, err)
		}
	}
	return ink
}

// capture screenshots a rectangle of the page, scrolled into view or not.
func capture(area page.Viewport) chromedp.Action[[]byte] {
	return func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
		yes := true
		res, err := cdp.Call(ctx, t, page.CaptureScreenshot, page.CaptureScreenshotParams{
			Format: page.CaptureScreenshotFormatPng, CaptureBeyondViewport: &yes, FromSurface: &yes, Clip: &area})
		if err != nil {
			return nil, err
		}
		return res.Data, nil
	}
}

// minChroma is how far apart a pixel's strongest and weakest channels must
// be (0-255) for it to count as colour: the palette's colours are 90 or
// more apart, greys 0 and the bands under 40.
const minChroma = 60

// coloured is the share of a PNG's pixels in colour.
func coloured(data []byte) (float64, error) {
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return 0, fmt.Errorf("decode screenshot: %w", err)
	}
	bounds := img.Bounds()
	n, total := 0, bounds.Dx()*bounds.Dy()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			if chroma(img, x, y) >= minChroma {
				n++
			}
		}
	}
	if total == 0 {
		return 0, nil
	}
	return float64(n) / float64(total), nil
}

// chroma is the spread of a pixel's channels, 0-255.
func chroma(img image.Image, x, y int) int {
	r, g, b, _ := img.At(x, y).RGBA()
	hi, lo := max(r, g, b), min(r, g, b)
	return int((hi - lo) >> 8)
}
