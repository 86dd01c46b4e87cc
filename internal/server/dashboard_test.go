package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/store"
)

// chromium finds a headless-capable Chromium, or skips the test (fails it
// under CORRAL_INTEGRATION=1).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CORRAL_INTEGRATION") == "1" {
		t.Fatal("chromium not found on PATH (scripts/deps/20-chromium.sh installs it)")
	}
	t.Skip("chromium not found on PATH; set CORRAL_INTEGRATION=1 to make this a failure")
	return ""
}

// TestDashboardShowsRunningJob loads the dashboard in headless Chromium
// with a job running, and checks the GPU grid, the job in it and in the
// queue, the job detail with its log, and that the page logged no errors.
func TestDashboardShowsRunningJob(t *testing.T) {
	bin := chromium(t)
	h := newHarness(t, 4)
	alice := h.tenant("alice", 0)
	j := h.submit(alice, api.JobRequest{Name: "train", GPUs: 2, Command: sh("echo dashboard log line; sleep 60")})
	h.waitState(alice, j.ID, store.Running, 20*time.Second)
	waiting := h.submit(alice, api.JobRequest{Name: "big", GPUs: 4, Command: []string{"true"}})

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	defer cancelTimeout()

	problems := watchConsole(ctx)
	err := chromedp.Do(ctx,
		chromedp.Navigate(h.url+"/#token="+alice.Token),
		chromedp.WaitVisible(chromedp.CSS(`#gpus .gpu.busy`)),
		chromedp.WaitVisible(chromedp.CSS(`#queue tr[data-job="`+waiting.ID+`"]`)),
		chromedp.Click(chromedp.CSS(`#queue tr[data-job="`+j.ID+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#detail`)),
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("detail-log").textContent.includes("dashboard log line")`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("the job's log never showed: %v", err)
	}
	text := func(sel string) string {
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	grid, queue, detail, log := text("#gpus"), text("#queue"), text("#detail-fields"), text("#detail-log")
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if n := strings.Count(grid, "GPU "); n != 4 {
		t.Errorf("the grid shows %d GPUs, want 4:\n%s", n, grid)
	}
	if strings.Count(grid, j.ID+"/0") != 2 {
		t.Errorf("the grid should show %s on two GPUs:\n%s", j.ID, grid)
	}
	if !strings.Contains(queue, j.ID) || !strings.Contains(queue, "running") || !strings.Contains(queue, ReasonGPUs) {
		t.Errorf("queue:\n%s", queue)
	}
	if !strings.Contains(detail, "alice") || !strings.Contains(log, "dashboard log line") {
		t.Errorf("detail %q, log %q", detail, log)
	}
	saveScreenshot(t, shot)
	time.Sleep(300 * time.Millisecond) // let late console messages arrive
	if p := problems(); len(p) > 0 {
		t.Errorf("the page logged problems:\n%s", strings.Join(p, "\n"))
	}
}

// watchConsole collects the page's console errors, warnings and uncaught
// exceptions; the returned func stops collecting and returns them.
func watchConsole(ctx context.Context) func() []string {
	ctx, cancel := context.WithCancel(ctx)
	messages := chromedp.Console(ctx)
	var mu sync.Mutex
	var problems []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return problems
	}
}

func saveScreenshot(t *testing.T, png []byte) {
	dirs := []string{t.TempDir()}
	if d := os.Getenv("CORRAL_SCREENSHOT_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, "dashboard.png"), png, 0o644); err != nil {
			t.Errorf("screenshot: %v", err)
		}
	}
}

// TestDashboardFetchesOnlyNewLog: the job detail first fetches the log's
// tail, then only what was appended (?offset=), and shows each line once.
func TestDashboardFetchesOnlyNewLog(t *testing.T) {
	bin := chromium(t)
	h := newHarness(t, 1)
	alice := h.tenant("alice", 0)
	// The second line comes only once the page has shown the first, so
	// that a slow browser start cannot make both arrive in the first tail.
	gate := filepath.Join(t.TempDir(), "go")
	if err := os.Chmod(filepath.Dir(gate), 0o777); err != nil {
		t.Fatal(err)
	}
	j := h.submit(alice, api.JobRequest{GPUs: 1, Command: sh("echo first; while [ ! -e " + gate + " ]; do sleep 0.1; done; echo second; sleep 60")})
	h.waitState(alice, j.ID, store.Running, 20*time.Second)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	defer cancelTimeout()
	err := chromedp.Do(ctx,
		chromedp.Navigate(h.url+"/#token="+alice.Token),
		chromedp.WaitVisible(chromedp.CSS(`#queue tr[data-job="`+j.ID+`"]`)),
		chromedp.Click(chromedp.CSS(`#queue tr[data-job="`+j.ID+`"]`)),
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("detail-log").textContent.includes("first")`,
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("the first line never showed: %v", err)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("detail-log").textContent.includes("second")`,
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("the appended line never showed: %v", err)
	}
	log, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#detail-log")))
	if err != nil {
		t.Fatal(err)
	}
	urls, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`performance.getEntriesByType("resource").map((e) => e.name).filter((u) => u.includes("/logs"))`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(log) != "first\nsecond" {
		t.Errorf("log %q, want first and second once each", log)
	}
	tails, offsets := 0, 0
	for _, u := range urls {
		tails += strings.Count(u, "tail=")
		offsets += strings.Count(u, "offset=")
	}
	if tails != 1 || offsets == 0 || tails+offsets != len(urls) {
		t.Errorf("log fetches %q: want one tail, then offsets only", urls)
	}
}
