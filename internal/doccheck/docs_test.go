package doccheck

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// kind is what the test does with a documented command.
type kind string

const (
	runIt     kind = "run"       // run offline, exit 0 (and the output the doc quotes)
	runServer kind = "server"    // run against the --dev server the doc starts
	parseOnly kind = "parse"     // corral <sub> -h exists and names every flag; scripts exist and parse
	skipIt    kind = "skip"      // the reason says why; paths it names must still exist
	startDev  kind = "start-dev" // corral server --dev: start one, fresh, on a free port
	sourced   kind = "source"    // source <(corral completion SHELL): the script SHELL -n reads, where SHELL is here
)

// notRun lists the documented commands the test does not run as written,
// keyed by the command's text, with the reason. Keep it short and honest:
// a command can be run, it is run.
var notRun = map[string]struct {
	kind   kind
	reason string
}{
	"go build -o corral ./cmd/corral":   {skipIt, "the test builds corral exactly this way, once, before any command"},
	"./scripts/test.sh":                 {parseOnly, "the whole test suite: this test is part of it"},
	"VERSION=v0.1.0 scripts/release.sh": {parseOnly, "minutes of cross-compiling; internal/ociimage release_test.go runs it"},
	"cd examples/cost":                  {parseOnly, "with ./run.sh after it: rewrites the committed example outputs"},
	"./run.sh":                          {parseOnly, "rewrites the committed example outputs in examples/cost"},
	"kubectl apply -k deploy/":          {skipIt, "needs a cluster; cmd/corral deploy_test.go checks what deploy/ holds, chart_install_test.go applies the chart to a real API server"},
	"helm install corral deploy/chart/corral -n corral-system --create-namespace":                                                    {skipIt, "needs a cluster and helm; the chart tests lint, render and apply it"},
	"helm upgrade corral deploy/chart/corral -n corral-system --reuse-values --set replicas=3":                                       {skipIt, "needs a cluster and helm; the chart tests lint, render and apply it"},
	"helm uninstall corral -n corral-system":                                                                                         {skipIt, "needs a cluster and helm"},
	"go run github.com/google/go-containerregistry/cmd/crane@v0.22.1 push dist/corral_v0.1.0_oci ghcr.io/corral-sched/corral:v0.1.0": {skipIt, "pushes to a registry"},
	"corral kube-scheduler --kubeconfig ~/.kube/config":                                                                              {parseOnly, "needs a cluster"},
	"corral kube-scheduler --kubeconfig ~/.kube/config --print-topology":                                                             {parseOnly, "needs a cluster"},
	"corral bench fgd --nodes openb_node_list_gpu_node.csv --pods openb_pod_list_default.csv,openb_pod_list_multigpu50.csv --policies fgd,corral,corral-online --seeds 42-51 --json out.json --svg out.svg": {parseOnly, "needs the openb trace, which is not in the repository"},
	"corral sim --workload sacct history.txt --nodes 64":                                                          {parseOnly, "needs a Slurm site's sacct history"},
	"corral prices import --format aws --out aws.yaml index.json":                                                 {parseOnly, "needs the provider's price file"},
	"corral prices import --format azure --seen 2026-11-28 --out azure.yaml retail.json":                          {parseOnly, "needs the provider's price file"},
	"corral prices import --format gcp --seen 2026-11-25 --out gcp.yaml skus.json":                                {parseOnly, "needs the provider's price file"},
	"corral prices import --format negotiated --out ours.yaml rates.csv":                                          {parseOnly, "needs the user's negotiated rates"},
	"corral plan --demand daily.csv --term 1y --prices aws.yaml":                                                  {parseOnly, "needs the user's demand and an imported price file"},
	"corral acct --kube-log acct.jsonl --price H100=3.93,A100=1.29 --capacity H100=16,A100=2":                     {parseOnly, "needs a cluster's accounting log (the transcript below it runs the same on cmd/corral/testdata)"},
	"corral acct --kube-log acct.jsonl --price catalog --capacity H100=64":                                        {parseOnly, "needs a cluster's accounting log"},
	"corral acct --kube-log acct.jsonl --price catalog --prices rates.yaml --rate reserved-1y --capacity H100=64": {parseOnly, "needs a cluster's accounting log and a rates file"},
}

// adjusted lists documented commands run with smaller settings than the
// document shows, to keep this test in about a minute on two cores.
var adjusted = map[string]struct{ run, reason string }{
	"corral sim --autoscale 0: --tco --html report.html":                              {"corral sim --autoscale 0: --tco --html report.html --days 7", "14 days with every policy autoscaled takes 10 s alone"},
	"corral sim --demand-dir demand/":                                                 {"corral sim --demand-dir demand/ --days 7", "14 days takes 8 s alone; corral plan reads what it writes"},
	"corral sim --moves":                                                              {"corral sim --moves --nodes 32 --days 14", "the default fleet takes 18 s; the 32-node run of docs/cost.md exercises the same path"},
	"corral sim --nodes 2000 --days 72 --load 0.85 --policies corral --json out.json": {"corral sim --nodes 64 --days 7 --load 0.85 --policies corral --json out.json", "2,000 nodes over 72 days takes minutes"},
	"corral sim --load 0.95 --explain job-001007":                                     {"corral sim --load 0.95 --explain job-001007 --days 7", "14 days at load 0.95 takes 26 s; job-001007 arrives within the first 7 days"},
}

// quotedAfter names commands whose output the document quotes in the
// plain block that follows the command's sh block.
var quotedAfter = map[string]bool{
	"corral place --fleet examples/fleets/h100-superpod.yaml examples/jobs/mixed.yaml":                                            true,
	"corral place --fleet examples/fleets/two-models.yaml examples/jobs/by-memory.yaml":                                           true,
	"corral sim --workload jobs cmd/corral/testdata/budget-month.csv --nodes 8 --policies corral --budget research=4000/720h":     true,
	"corral sim --workload jobs cmd/corral/testdata/budget-month.csv --nodes 8 --policies corral --budget 'research=$16000/720h'": true,
}

// clientCommands talk to a server.
var clientCommands = map[string]bool{
	"submit": true, "sbatch": true, "run": true, "queue": true, "gpus": true, "explain": true, "logs": true,
	"cancel": true, "hold": true, "release": true, "requeue": true, "update": true,
}

// nested are the subcommands with subcommands of their own.
var nested = map[string]bool{"bench": true, "prices": true, "server": true}

// classify says what to do with a command and, where the text differs,
// what to run instead.
func classify(text string) (k kind, toRun, reason string) {
	text = userCommand(text)
	if n, ok := notRun[text]; ok {
		return n.kind, text, n.reason
	}
	if a, ok := adjusted[text]; ok {
		text, reason = a.run, a.reason
	}
	f := strings.Fields(text)
	switch {
	case strings.HasPrefix(text, "export CORRAL_"):
		return skipIt, text, "the test exports what the server it started printed"
	case strings.HasPrefix(text, "source <(corral "):
		return sourced, text, ""
	case strings.HasPrefix(text, "corral server --dev"):
		return startDev, text, ""
	case len(f) < 2 || f[0] != "corral":
		return "", text, ""
	case clientCommands[f[1]], f[1] == "acct" && !strings.Contains(text, "--kube-log") && !strings.Contains(text, "--check-focus"):
		return runServer, text, reason
	}
	return runIt, text, reason
}

// userCommand writes go run ./cmd/corral and ./corral as corral, the
// command a user who installed it types.
func userCommand(text string) string {
	for _, p := range []string{"go run ./cmd/corral ", "./corral "} {
		if rest, ok := strings.CutPrefix(text, p); ok {
			return "corral " + rest
		}
	}
	return text
}

// TestDocumentedCommands runs every command README.md and docs/*.md show:
// the offline ones as a user would, the quick starts' client commands
// against a --dev server started as the doc says, and for the rest it
// checks that the subcommand and every flag they name exist.
func TestDocumentedCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds corral and runs the documented commands")
	}
	repo := repoRoot(t)
	bin := buildCorral(t, repo)
	docs := documents(t, repo)
	seen := map[string]bool{}
	for _, doc := range docs {
		md, err := os.ReadFile(filepath.Join(repo, doc))
		if err != nil {
			t.Fatal(err)
		}
		unmarkedCommands(t, doc, Blocks(string(md)))
		cmds := Commands(doc, string(md))
		if len(cmds) == 0 {
			continue
		}
		t.Run(strings.ReplaceAll(doc, "/", "_"), func(t *testing.T) {
			s := newShell(t, repo, bin)
			blocks := Blocks(string(md))
			for _, c := range cmds {
				seen[userCommand(c.Text)] = true
				s.check(t, c, blocks)
			}
		})
	}
	if run := flag.Lookup("test.run"); run != nil && strings.Contains(run.Value.String(), "/") {
		return // some documents only: the tables are checked on a whole run
	}
	for text := range notRun {
		if !seen[text] {
			t.Errorf("notRun names %q, which no document shows any more: remove it", text)
		}
	}
	for text := range adjusted {
		if !seen[text] {
			t.Errorf("adjusted names %q, which no document shows any more: remove it", text)
		}
	}
}

// unmarkedCommands fails on a plain block that shows corral commands
// without "$ ": this test would not see them; mark the block sh, or write
// the commands as a transcript.
func unmarkedCommands(t *testing.T, doc string, blocks []Block) {
	for _, b := range blocks {
		if b.Lang != "" || len(transcriptCommands(doc, 0, b)) > 0 {
			continue // sh, another language, or a transcript: read as such
		}
		for i, line := range b.Lines {
			if strings.HasPrefix(line, "corral ") {
				t.Errorf("%s:%d: %q is in a block that is neither sh nor a transcript: mark it ```sh or write it as \"$ %s\"", doc, b.Line+i, line, line)
			}
		}
	}
}

// shell is one document's session: its working directory (the
// repository's files linked in, so paths in the docs resolve and what
// commands write stays out of the repository), its home and, once the
// document starts one, its server.
type shell struct {
	repo, bin, dir, home string
	server               []string // CORRAL_SERVER=..., CORRAL_TOKEN=...
	python               string   // a directory with the stub python the quick starts' jobs run
}

// pythonStub is a directory holding a "python" that prints what it was
// asked to run: the quick starts' jobs (python train.py) then run as the
// server's user can (the test's own python may sit where nobody cannot
// reach it), and what they run is the user's, not corral's.
func pythonStub(t *testing.T) string {
	dir := openTempDir(t)
	stub := "#!/bin/sh\nsleep 1\necho python \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "python"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func newShell(t *testing.T, repo, bin string) *shell {
	dir := openTempDir(t)
	entries, err := os.ReadDir(repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		if err := os.Symlink(filepath.Join(repo, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range map[string]string{
		"train.py":     "print('training')\n",
		"eval.py":      "print('evaluating')\n",
		"train.sbatch": "#!/bin/sh\n#SBATCH --gpus=1\n#SBATCH --time=0:10:00\necho trained\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	home := openTempDir(t)
	if err := os.MkdirAll(filepath.Join(home, ".config", "fish", "completions"), 0o755); err != nil {
		t.Fatal(err)
	}
	return &shell{repo: repo, bin: bin, dir: dir, home: home, python: pythonStub(t)}
}

// openTempDir is a temporary directory that a --dev server run as root
// can run jobs in as nobody (t.TempDir's are 0700).
func openTempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "corral-doccheck-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func (s *shell) check(t *testing.T, c Command, blocks []Block) {
	k, text, reason := classify(c.Text)
	where := fmt.Sprintf("%s:%d: %s", c.Doc, c.Line, c.Text)
	s.checkPaths(t, where, text)
	switch k {
	case "":
		t.Errorf("%s: not a corral command and not in notRun: add it there with the reason it is not run", where)
	case skipIt:
		t.Logf("%s: skipped: %s", where, reason)
	case parseOnly:
		s.parse(t, where, text)
	case startDev:
		s.startServer(t, where, text)
	case sourced:
		s.source(t, where, text)
	case runServer:
		if s.server == nil {
			s.startServerWithHistory(t, where)
		}
		fallthrough
	case runIt:
		start := time.Now()
		out, err := s.runOnce(text, k)
		t.Logf("%s: %.1f s", where, time.Since(start).Seconds())
		if err != nil && (c.Expect == nil || strings.Contains(err.Error(), "still running")) {
			t.Errorf("%s: %v\n%s", where, err, tail(out))
			return
		}
		expect := c.Expect
		if expect == nil && quotedAfter[c.Text] && c.Block+1 < len(blocks) && blocks[c.Block+1].Lang == "" {
			expect = blocks[c.Block+1].Lines
		}
		if expect != nil {
			if missing, ok := Matches(expect, out); !ok {
				t.Errorf("%s: the output the document quotes is not what it prints: no line %q in\n%s", where, missing, out)
			}
		}
		if reason != "" {
			t.Logf("%s: ran as %q: %s", where, text, reason)
		}
	}
}

// ran keeps the output of offline commands that write no file, so that
// a command several documents show (corral bench fgd, corral sim) runs
// once: its output depends only on its flags.
var ran = map[string]string{}

func (s *shell) runOnce(text string, k kind) (string, error) {
	pure := k == runIt && !written(text, "") && !s.readsOwnFile(text)
	if out, ok := ran[text]; ok && pure {
		return out, nil
	}
	out, err := s.run(text, 90*time.Second)
	if err == nil && pure {
		ran[text] = out
	}
	return out, err
}

// readsOwnFile says whether a command names a file that an earlier
// command of the document wrote (one in its directory, not the
// repository's).
func (s *shell) readsOwnFile(text string) bool {
	for _, w := range strings.Fields(text) {
		w = w[strings.LastIndex(w, "=")+1:]
		if _, err := os.Stat(filepath.Join(s.dir, w)); err != nil || w == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(s.repo, w)); err != nil {
			return true
		}
	}
	return false
}

// source runs the command inside source <(...) and has the shell it is
// for read what it prints, where that shell is installed.
func (s *shell) source(t *testing.T, where, text string) {
	inner := strings.TrimSuffix(strings.TrimPrefix(text, "source <("), ")")
	out, err := s.run(inner, 30*time.Second)
	if err != nil || strings.TrimSpace(out) == "" {
		t.Errorf("%s: %s: %v\n%s", where, inner, err, tail(out))
		return
	}
	f := strings.Fields(inner)
	sh, err := exec.LookPath(f[len(f)-1])
	if err != nil {
		t.Logf("%s: %s is not installed here; the script is not parsed", where, f[len(f)-1])
		return
	}
	script := filepath.Join(s.home, "completion")
	if err := os.WriteFile(script, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(sh, "-n", script).CombinedOutput(); err != nil {
		t.Errorf("%s: %s -n reads no script: %v\n%s", where, sh, err, msg)
	}
}

// run runs one command with bash in the document's directory, corral on
// its PATH. A transcript's command that fails is expected to fail: its
// quoted output says how; run reports the exit status in the output.
func (s *shell) run(text string, limit time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", text)
	cmd.Dir = s.dir
	path := strings.Join([]string{filepath.Dir(s.bin), s.python, os.Getenv("PATH")}, string(os.PathListSeparator))
	cmd.Env = append(os.Environ(), "PATH="+path,
		"HOME="+s.home, "XDG_STATE_HOME="+filepath.Join(s.home, "state"), "XDG_CONFIG_HOME="+filepath.Join(s.home, "config"))
	cmd.Env = append(cmd.Env, s.server...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return string(out), fmt.Errorf("still running after %v", limit)
	}
	return string(out), err
}

// parse checks a command it cannot run: a script exists and sh -n reads
// it; corral's subcommand has help and its help names every flag given.
func (s *shell) parse(t *testing.T, where, text string) {
	f := strings.Fields(text)
	if f[0] != "corral" {
		for _, w := range f {
			if strings.HasSuffix(w, ".sh") {
				p := filepath.Join(s.repo, w)
				if w == "./run.sh" {
					p = filepath.Join(s.repo, "examples/cost/run.sh")
				}
				if out, err := exec.Command(interpreter(t, p), "-n", p).CombinedOutput(); err != nil {
					t.Errorf("%s: %s: %v %s", where, p, err, out)
				}
			}
		}
		return
	}
	sub := f[1:2]
	if len(f) > 2 && nested[f[1]] && !strings.HasPrefix(f[2], "-") {
		sub = f[1:3]
	}
	out, err := s.run("corral "+strings.Join(sub, " ")+" -h", 30*time.Second)
	if err != nil {
		t.Errorf("%s: corral %s -h: %v\n%s", where, strings.Join(sub, " "), err, tail(out))
		return
	}
	for _, name := range flagNames(f) {
		re := regexp.MustCompile(`(^|[\s,(])--?` + regexp.QuoteMeta(name) + `([\s=,)]|$)`)
		if !re.MatchString(out) {
			t.Errorf("%s: corral %s -h names no flag -%s", where, strings.Join(sub, " "), name)
		}
	}
}

// interpreter is the shell a script's #! line names (sh without one).
func interpreter(t *testing.T, script string) string {
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	if f := strings.Fields(strings.TrimPrefix(first, "#!")); strings.HasPrefix(first, "#!") && len(f) > 0 {
		return filepath.Base(f[len(f)-1])
	}
	return "sh"
}

// flagNames are the flags a command line gives, before any "--".
func flagNames(fields []string) []string {
	var names []string
	for _, w := range fields {
		if w == "--" {
			break
		}
		if strings.HasPrefix(w, "-") && len(w) > 1 {
			name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
			names = append(names, name)
		}
	}
	return names
}

// checkPaths: every path into the repository that a command names exists.
func (s *shell) checkPaths(t *testing.T, where, text string) {
	for _, w := range strings.Fields(text) {
		w = strings.TrimSuffix(strings.Split(w, "=")[len(strings.Split(w, "="))-1], "/")
		top, _, ok := strings.Cut(w, "/")
		if !ok || top == "" || top == "." || top == ".." || top == "~" {
			continue
		}
		if _, err := os.Stat(filepath.Join(s.repo, top)); err != nil {
			continue // not a path into the repository
		}
		if _, err := os.Stat(filepath.Join(s.repo, w)); err != nil && !written(text, w) {
			t.Errorf("%s: names %s, which is not in the repository", where, w)
		}
	}
}

// written says whether the command writes path itself (an output flag
// or a redirection); with path "", whether it writes any file.
func written(text, path string) bool {
	for _, flag := range []string{"--out ", "--demand-dir ", "--json ", "--html ", "--svg ", ">"} {
		if strings.Contains(text, flag+path) {
			return true
		}
	}
	return false
}

// startServer starts corral server --dev as the quick start says, on any
// free port with a fresh database under the shell's home, and keeps the
// export line it prints.
func (s *shell) startServer(t *testing.T, where, text string) {
	// Any free port: the export line says which, where a port picked free
	// beforehand may be taken by a test running beside.
	args := append(strings.Fields(text)[1:], "--fresh", "--listen", "127.0.0.1:0")
	cmd := exec.Command(s.bin, args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "HOME="+s.home, "XDG_STATE_HOME="+filepath.Join(s.home, "state"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(30 * time.Second)
	for s.server == nil {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("%s: the server exited before it printed its export line: %s", where, stderr.String())
			}
			if rest, ok := strings.CutPrefix(line, "export "); ok && strings.Contains(rest, "CORRAL_TOKEN=") {
				s.server = strings.Fields(rest)
			}
		case <-deadline:
			t.Fatalf("%s: no export line in 30 s: %s", where, stderr.String())
		}
	}
	go func() {
		for range lines {
		}
	}()
	if out, err := s.run("corral queue", 30*time.Second); err != nil {
		t.Fatalf("%s: the server does not answer with what it printed (%v): %s", where, err, out)
	}
}

// startServerWithHistory is the server a document's client command
// speaks of without starting one ("this server's history"): a --dev
// server that has run one job of the quick start to its end.
func (s *shell) startServerWithHistory(t *testing.T, where string) {
	s.startServer(t, where+" (a --dev server the test starts)", "corral server --dev")
	if out, err := s.run("corral run -G 1 -- python train.py", 60*time.Second); err != nil {
		t.Fatalf("%s: a first job on the --dev server: %v\n%s", where, err, out)
	}
}

// documents are README.md and docs/*.md, relative to the repository.
func documents(t *testing.T, repo string) []string {
	docs, err := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, d := range docs {
		out = append(out, filepath.ToSlash(strings.TrimPrefix(d, repo+string(filepath.Separator))))
	}
	sort.Strings(out[1:])
	return out
}

func repoRoot(t *testing.T) string {
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("repository root: %v", err)
	}
	return dir
}

// buildCorral builds the binary once, as the README's install line does.
func buildCorral(t *testing.T, repo string) string {
	dir := openTempDir(t)
	bin := filepath.Join(dir, "corral")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/corral")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/corral: %v\n%s", err, out)
	}
	return bin
}

func tail(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}
