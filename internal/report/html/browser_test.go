package html

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium finds a headless Chromium, or skips the test (fails it when
// CORRAL_INTEGRATION=1).
func chromium(t *testing.T) string {
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

// checkTables compares every number shown in a table with the value at its
// data-path in the embedded JSON, within the rounding of the text shown.
const checkTables = `(() => {
  const data = JSON.parse(document.getElementById("data").textContent);
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
  return JSON.stringify({checked: n, bad: bad});
})()`

func TestBrowserOpensReport(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(f, smallReport(t)); err != nil {
		t.Fatal(err)
	}
	f.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:0:0],
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true))
	tctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	actx, cancel := chromedp.NewExecAllocator(tctx, opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()

	// The first Run starts the browser; console messages are read from then on.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	cctx, stopConsole := context.WithCancel(ctx)
	messages := chromedp.Console(cctx)
	var problems []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning {
				problems = append(problems, m.String())
			}
		}
	}()

	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+path), chromedp.WaitReady("#data")); err != nil {
		t.Fatal(err)
	}
	ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("svg[id]")).map(s => s.id)`))
	if err != nil {
		t.Fatal(err)
	}
	tables, err := chromedp.Run(ctx, chromedp.Evaluate[string](checkTables))
	if err != nil {
		t.Fatal(err)
	}
	stopConsole()
	<-done
	if len(problems) > 0 {
		t.Errorf("page reported problems:\n%s", strings.Join(problems, "\n"))
	}
	for _, want := range chartIDs {
		found := false
		for _, id := range ids {
			found = found || id == want
		}
		if !found {
			t.Errorf("chart %q not in the page (charts: %v)", want, ids)
		}
	}
	if !strings.Contains(tables, `"bad":[]`) || strings.Contains(tables, `"checked":0`) {
		t.Errorf("table numbers do not match the embedded data: %s", tables)
	}

	// The check itself must catch a number that disagrees with the data.
	wrong := Report{Title: "wrong", Data: map[string]float64{"x": 2},
		Tables: []Table{{ID: "t", Title: "t", Columns: []string{"x"}, Rows: [][]Cell{{Num(3, 0, "x")}}}}}
	wrongPath := filepath.Join(dir, "wrong.html")
	var b strings.Builder
	if err := Write(&b, wrong); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wrongPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+wrongPath), chromedp.WaitReady("#data")); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](checkTables))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "x: shown 3, data 2") {
		t.Errorf("the table check missed a wrong number: %s", got)
	}
}
