package browsertest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Chromium returns the path of a headless-capable Chromium, or skips the
// test (fails it when CORRAL_INTEGRATION=1).
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no chromium on PATH (scripts/deps/20-chromium.sh installs it)"
	if os.Getenv("CORRAL_INTEGRATION") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// Browser is one headless Chromium, closed when the test ends.
type Browser struct {
	ctx      context.Context
	problems chan string
}

// New starts a browser for the test.
func New(t testing.TB) *Browser {
	t.Helper()
	bin := Chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:0:0],
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")), chromedp.WindowSize(1280, 1024),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true))
	tctx, cancelT := context.WithTimeout(context.Background(), 2*time.Minute)
	actx, cancelA := chromedp.NewExecAllocator(tctx, opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelC(); cancelA(); cancelT() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatal(err)
	}
	b := &Browser{ctx: ctx, problems: make(chan string, 1000)}
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning {
				select {
				case b.problems <- m.String():
				default:
				}
			}
		}
	}()
	return b
}

// Context is the browser's tab, for further chromedp actions.
func (b *Browser) Context() context.Context { return b.ctx }

// Page is what a loaded page showed.
type Page struct {
	ChartIDs []string // ids of the <svg> elements
	Checked  int      // table cells with a data-path
	Bad      []string // cells whose number differs from the embedded JSON
	Problems []string // console errors, warnings and exceptions so far
	// Ink is, per chart, the share of the pixels where it draws its data
	// that are in colour, from a screenshot: 0 for a chart with axes,
	// grid and legend but nothing plotted (see ink.go).
	Ink map[string]float64
}

// Empty lists the charts whose ink is below min, in page order.
func (p Page) Empty(min float64) []string {
	var out []string
	for _, id := range p.ChartIDs {
		if p.Ink[id] < min {
			out = append(out, id)
		}
	}
	return out
}

// checkTables compares every number shown in a table cell that names a
// data-path with the value at that path of the JSON in #data, within the
// rounding of the text shown.
const checkTables = `(() => {
  const el = document.getElementById("data");
  const data = el ? JSON.parse(el.textContent) : {};
  const bad = [];
  let n = 0;
  for (const td of document.querySelectorAll("td[data-path]")) {
    n++;
    const v = td.dataset.path.split(".").reduce((o, k) => (o == null ? undefined : o[k]), data);
    const shown = parseFloat(td.textContent.replace(/[,%$]/g, ""));
    const decimals = (td.textContent.split(".")[1] || "").replace(/[^0-9]/g, "").length;
    const scale = parseFloat(td.dataset.scale);
    if (typeof v !== "number" || Math.abs(shown - v * scale) > 0.5 * Math.pow(10, -decimals) + 1e-9) {
      bad.push(td.dataset.path + ": shown " + td.textContent + ", data " + v);
    }
  }
  return JSON.stringify({checked: n, bad: bad, charts: Array.from(document.querySelectorAll("svg[id]")).map(s => s.id)});
})()`

// Open loads url, waits for selector, and reports what the page shows.
func (b *Browser) Open(t testing.TB, url, selector string) Page {
	t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Navigate(url), chromedp.WaitReady(selector)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	out, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](checkTables))
	if err != nil {
		t.Fatalf("inspect %s: %v", url, err)
	}
	var got struct {
		Checked int
		Bad     []string
		Charts  []string
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("inspect %s: %v", url, err)
	}
	p := Page{ChartIDs: got.Charts, Checked: got.Checked, Bad: got.Bad, Ink: b.ink(t, url)}
	for {
		select {
		case m := <-b.problems:
			p.Problems = append(p.Problems, m)
		default:
			return p
		}
	}
}
