package main

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/server/api"
	"go.yaml.in/yaml/v3"
)

// commandPaths are every command and every command under one: "sim",
// "bench fgd".
func commandPaths(t *testing.T) [][]string {
	t.Helper()
	var paths [][]string
	for _, c := range commands() {
		paths = append(paths, []string{c.name})
		for _, s := range c.subs {
			paths = append(paths, []string{c.name, s})
		}
	}
	return paths
}

// Every command prints its help on stdout and exits 0 for -h, and says a
// wrong flag in one line and a hint on stderr, exiting 2.
func TestEveryCommandHelpAndWrongFlag(t *testing.T) {
	for _, path := range commandPaths(t) {
		name := strings.Join(path, " ")
		t.Run(name, func(t *testing.T) {
			for _, h := range []string{"-h", "--help"} {
				out, errOut, code := runCLI(t, append(slices.Clone(path), h)...)
				if code != 0 || errOut != "" || !strings.HasPrefix(out, "Usage: corral "+name) {
					t.Errorf("%s: exit %d, stderr %q, stdout starting %q; want exit 0 and the usage on stdout", h, code, errOut, head(out))
				}
			}
			out, errOut, code := runCLI(t, append(slices.Clone(path), "--no-such-flag")...)
			want := "corral " + name + ": flag provided but not defined: -no-such-flag\nrun 'corral " + name + " -h' for usage\n"
			if code != 2 || out != "" || errOut != want {
				t.Errorf("wrong flag: exit %d, stdout %q, stderr\n%s\nwant exit 2 and\n%s", code, head(out), errOut, want)
			}
		})
	}
}

func head(s string) string { return s[:min(len(s), 60)] }

func TestTopLevelUsage(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		code     int
		out, err string // prefixes; "" means empty
	}{
		{"corral alone: short usage on stderr", nil, 2, "", "Usage: corral <command>"},
		{"-h", []string{"-h"}, 0, "corral schedules GPU work", ""},
		{"--help", []string{"--help"}, 0, "corral schedules GPU work", ""},
		{"help", []string{"help"}, 0, "corral schedules GPU work", ""},
		{"help of a command", []string{"help", "place"}, 0, "Usage: corral place", ""},
		{"unknown command", []string{"frobnicate"}, 2, "", "corral: unknown command \"frobnicate\"\nrun 'corral -h'"},
		{"unknown benchmark", []string{"bench", "nope"}, 2, "", "corral bench: unknown benchmark \"nope\""},
		{"missing argument", []string{"place", "--fleet", "f.yaml"}, 2, "", "corral place: need --fleet and at least one job file\nrun 'corral place -h' for usage\n"},
		{"bad flag value", []string{"sim", "--nodes", "many"}, 2, "", "corral sim: invalid value \"many\" for flag -nodes"},
		{"stray argument", []string{"prices", "extra"}, 2, "", "corral prices: unexpected argument \"extra\"\nrun 'corral prices -h'"},
		{"tenant without a verb", []string{"server", "tenant"}, 2, "", "corral server tenant: give list"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, c.code, errOut)
			}
			for _, s := range []struct{ what, got, want string }{{"stdout", out, c.out}, {"stderr", errOut, c.err}} {
				if (s.want == "" && s.got != "") || !strings.HasPrefix(s.got, s.want) {
					t.Errorf("%s %q, want it to start with %q", s.what, head(s.got), s.want)
				}
			}
		})
	}
}

// Flags after positional arguments count ("corral place jobs.yaml
// --fleet f.yaml" said "need --fleet"); submit keeps the job's command
// and its flags as they are.
func TestNormalize(t *testing.T) {
	fs, _ := clientFlagSet("submit", os.Stderr)
	defineSubmitFlags(fs, &api.JobRequest{}, &submitFlags{})
	cases := []struct {
		name         string
		args         []string
		interspersed bool
		want         []string
	}{
		{"flags after arguments move before them", []string{"a.yaml", "--server", "s", "b.yaml", "--json"}, true,
			[]string{"--server", "s", "--json", "--", "a.yaml", "b.yaml"}},
		{"-- ends the flags", []string{"--server", "s", "--", "--json", "x"}, true, []string{"--server", "s", "--", "--json", "x"}},
		{"a value that looks like a flag stays the flag's", []string{"x", "--name", "-h"}, true, []string{"--name", "-h", "--", "x"}},
		{"glued short flags split, after arguments too", []string{"x", "-n4", "-t90"}, true, []string{"-n", "4", "-t", "90", "--", "x"}},
		{"unknown flags left for the flag package", []string{"x", "--nope"}, true, []string{"--nope", "--", "x"}},
		{"submit: the command ends the flags", []string{"-n4", "python", "train.py", "--lr", "3"}, false,
			[]string{"-n", "4", "--", "python", "train.py", "--lr", "3"}},
		{"submit: -- before the command", []string{"-G", "1", "--", "sh", "-c", "x"}, false, []string{"-G", "1", "--", "sh", "-c", "x"}},
		{"no arguments", []string{"--json"}, true, []string{"--json"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := normalize(fs, c.args, c.interspersed); !slices.Equal(got, c.want) {
				t.Errorf("normalize(%q) = %q, want %q", c.args, got, c.want)
			}
		})
	}
}

func TestFlagsAfterArguments(t *testing.T) {
	out, errOut, code := runCLI(t, "place", "../../examples/jobs/mixed.yaml", "--fleet", "../../examples/fleets/h100-superpod.yaml")
	if code != 0 || !strings.Contains(out, "6 of 7 jobs placed") {
		t.Errorf("place JOBS --fleet F: exit %d, %s%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "completion", "bash", "-h")
	if code != 0 || !strings.HasPrefix(out, "Usage: corral completion") {
		t.Errorf("completion bash -h: exit %d, %q %q", code, head(out), errOut)
	}
}

func TestVersionCommand(t *testing.T) {
	text, _, code := runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(text, "corral ") || !strings.Contains(text, runtime.Version()) || strings.Count(text, "\n") != 1 {
		t.Errorf("version: exit %d, %q", code, text)
	}
	if again, _, _ := runCLI(t, "--version"); again != text {
		t.Errorf("--version %q, version %q", again, text)
	}
	js, _, code := runCLI(t, "version", "-o", "json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(js), &doc); err != nil || code != 0 {
		t.Fatalf("version -o json: exit %d, %v: %s", code, err, js)
	}
	if doc["go_version"] != runtime.Version() || doc["version"] == "" || doc["platform"] != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("version -o json: %v", doc)
	}
	if _, errOut, code := runCLI(t, "version", "-o", "xml"); code != 2 || !strings.Contains(errOut, `-o "xml": want text, json or yaml`) {
		t.Errorf("version -o xml: exit %d, %q", code, errOut)
	}
}

// The bash script, run by bash, completes commands, the command under
// one, each command's flags and the words a command takes.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script, errOut, code := runCLI(t, "completion", "bash")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	path := filepath.Join(t.TempDir(), "corral.bash")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ line, want string }{
		{"corral si", "sim"},
		{"corral --vers", "--version"},
		{"corral sim --fle", "--fleet"},
		{"corral sim --fleet ", ""}, // a value: files, none in the empty directory
		{"corral bench ", "fgd scale"},
		{"corral bench fgd --se", "--seeds"},
		{"corral server ", "tenant"},
		{"corral server --dev", "--dev"},
		{"corral server tenant --quo", "--quota --quota-cpus --quota-mem"},
		{"corral server tenant cr", "create"},
		{"corral completion ", "bash zsh fish"},
		{"corral submit -G", "-G"},
	}
	for _, c := range cases {
		words := strings.Fields(c.line)
		if strings.HasSuffix(c.line, " ") {
			words = append(words, "")
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + w + "'"
		}
		prog := "source " + path + "; COMP_WORDS=(" + strings.Join(quoted, " ") + "); COMP_CWORD=" +
			strconv.Itoa(len(words)-1) + "; _corral; echo \"${COMPREPLY[*]}\""
		cmd := exec.Command(bash, "--norc", "-c", prog)
		cmd.Dir = t.TempDir()
		got, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v: %s", c.line, err, got)
		}
		if s := strings.TrimSpace(string(got)); s != c.want {
			t.Errorf("%q completes to %q, want %q", c.line, s, c.want)
		}
	}
}

// Each script names every command and every flag of every command, and
// the shell that reads it, where it is installed, finds no syntax error.
func TestCompletionScriptsNameEveryFlag(t *testing.T) {
	entries, err := completionEntries()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(commandPaths(t)) {
		t.Fatalf("%d entries, %d commands", len(entries), len(commandPaths(t)))
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		script, errOut, code := runCLI(t, "completion", shell)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", shell, code, errOut)
		}
		for _, e := range entries {
			if _, sub, _ := strings.Cut(e.path, " "); !strings.Contains(script, e.path) && !strings.Contains(script, "from "+sub) {
				t.Errorf("%s: no %q", shell, e.path)
			}
			if len(e.flags) == 0 && e.path != "bench" && e.path != "completion" {
				t.Errorf("%s: no flags read (did it parse with parseFlags?)", e.path)
			}
			for _, f := range e.flags {
				want := dashed(f)
				if shell == "fish" {
					want = map[bool]string{true: "-s ", false: "-l "}[len(f.Name) == 1] + f.Name
				}
				if !strings.Contains(script, want) {
					t.Errorf("%s: %s lacks %s", shell, e.path, want)
				}
			}
		}
		if sh, err := exec.LookPath(shell); err == nil {
			path := filepath.Join(t.TempDir(), "corral."+shell)
			os.WriteFile(path, []byte(script), 0o644)
			if out, err := exec.Command(sh, "-n", path).CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v: %s", shell, err, out)
			}
		}
	}
}

// --json - writes the document alone to stdout, the table to stderr,
// where --json takes a file; it made a file named "-".
func TestJSONToStdout(t *testing.T) {
	for _, dash := range [][]string{{"--json", "-"}, {"--json=-"}, {"-json", "-"}} {
		args := append([]string{"place", "--fleet", "../../examples/fleets/h100-superpod.yaml"}, dash...)
		out, errOut, code := runCLI(t, append(args, "../../examples/jobs/mixed.yaml")...)
		var results []placedJob
		if err := json.Unmarshal([]byte(out), &results); err != nil || code != 0 || len(results) != 7 {
			t.Errorf("%v: exit %d, %d results (%v) on stdout:\n%s", dash, code, len(results), err, head(out))
		}
		if !strings.Contains(errOut, "6 of 7 jobs placed") {
			t.Errorf("%v: the table is not on stderr: %q", dash, head(errOut))
		}
		if _, err := os.Stat("-"); err == nil {
			os.Remove("-")
			t.Errorf("%v: wrote a file named -", dash)
		}
	}
	// A --json switch is left as it is: "-" is then an argument.
	if _, errOut, code := runCLI(t, "prices", "--json", "-"); code != 2 || !strings.Contains(errOut, `unexpected argument "-"`) {
		t.Errorf("prices --json -: exit %d, %q", code, errOut)
	}
}

// No server listening: one line that says where the client looked and
// how to start a server, not a raw "dial tcp".
func TestNoServerIsOneLine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, errOut, code := runCLI(t, "queue", "--server", "http://"+addr, "--token", "x")
	want := "corral queue: no corral server at http://" + addr + " (connection refused;"
	if code != 1 || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "corral server --dev") {
		t.Errorf("exit %d, stderr %q; want one line starting %q and naming corral server --dev", code, errOut, want)
	}
}

// A mistyped GPU model or MIG profile is an error (exit 1), not a job
// that does not fit (exit 0).
func TestPlaceRefusesUnknownModelsAndProfiles(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, file, want string }{
		{"model", "name: a\ngpus: 1\nmodels: [H100-80G]\n", `job "a", group "task": unknown GPU model "H100-80G" (known: `},
		{"profile of the model", "name: b\nmig: 9g.99gb\nmodels: [H100-80GB]\n", `job "b", group "task": H100-80GB has no MIG profile "9g.99gb" (valid: `},
		{"profile of no model", "name: c\nmig: 9g.99gb\n", `job "c", group "task": no GPU model in the catalog has the MIG profile "9g.99gb"`},
		{"model asked by memory", "name: d\nbyGPUMemory: {total: 600G, models: [H100-80G]}\n", `job "d", byGPUMemory: unknown GPU model "H100-80G" (known: `},
	} {
		path := filepath.Join(dir, c.name+".yaml")
		os.WriteFile(path, []byte(c.file), 0o644)
		out, errOut, code := runCLI(t, "place", "--fleet", "../../examples/fleets/h100-superpod.yaml", path)
		if code != 1 || out != "" || !strings.HasPrefix(errOut, "corral place: "+path+": "+c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and %q", c.name, code, head(out), errOut, c.want)
		}
	}
}

// TestPlaceByGPUMemory places the example jobs that ask by GPU memory on
// the example fleet of two models: each line says the model and count
// chosen, and a job no free shape holds says what it waits for.
func TestPlaceByGPUMemory(t *testing.T) {
	out, errOut, code := runCLI(t, "place", "--fleet", "../../examples/fleets/two-models.yaml", "../../examples/jobs/by-memory.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"finetune             1 task on 1 rack, 1 node: h200-0000; chose 5x H200-141GB (705Gi) for 600Gi of GPU memory\n",
		"finetune-h100        1 task on 1 rack, 1 node: h100-0000; chose 8x H100-80GB (640Gi) for 600Gi of GPU memory, models H100-80GB\n",
		"pretrain             does not fit: asks 2Ti of GPU memory: the scheduler chose 16x H200-141GB as 2 tasks of 8 (2256Gi); needs 16 GPUs",
		"eval                 1 task on 1 rack, 1 node: h200-0000; chose 3x H200-141GB (423Gi) for 300Gi of GPU memory, at least 100Gi per GPU\n",
		"3 of 4 jobs placed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// Every command with machine-readable output has both --json and --yaml,
// and no other command has either: one meaning everywhere.
func TestEveryCommandJSONHasYAML(t *testing.T) {
	want := map[string]bool{ // the commands that print a document
		"bench fgd": true, "bench scale": true, "sim": true, "prices": true, "plan": true, "place": true,
		"server tenant": true, "submit": true, "sbatch": true, "run": true, "queue": true, "gpus": true,
		"cancel": true, "hold": true, "release": true, "requeue": true, "update": true, "acct": true,
		"explain": true, "version": true,
	}
	for _, path := range commandPaths(t) {
		name := strings.Join(path, " ")
		c, _ := lookup(path[0])
		fl, err := commandFlags(c, path[1:]...)
		if err != nil {
			t.Fatal(err)
		}
		has := map[string]bool{}
		for _, f := range fl {
			has[f.Name] = true
		}
		if has["json"] != want[name] || has["yaml"] != want[name] {
			t.Errorf("%s: --json %v, --yaml %v; want both %v", name, has["json"], has["yaml"], want[name])
		}
	}
}

// --yaml prints the document --json prints, as YAML, to stdout: for a
// --json switch (prices, version), for a --json that takes a file (place,
// plan, bench fgd, also given as a bare --json), with the flag anywhere.
func TestYAMLIsTheJSONDocument(t *testing.T) {
	place := []string{"place", "--fleet", "../../examples/fleets/h100-superpod.yaml", "../../examples/jobs/mixed.yaml"}
	fgd := []string{"bench", "fgd", "--seeds", "42", "--policies", "fgd", "--bound=false", "--timing=false"}
	dir := planFiles(t)
	plan := []string{"plan", "--demand", filepath.Join(dir, "packed.csv"), "--prices", filepath.Join(dir, "prices.yaml"), "--term", "1y"}
	cases := []struct {
		name       string
		args       []string
		json, yaml []string // the flags that ask for each
	}{
		{"prices", []string{"prices"}, []string{"--json"}, []string{"--yaml"}},
		{"version", []string{"version"}, []string{"--json"}, []string{"-o", "yaml"}},
		{"place", place, []string{"--json", "-"}, []string{"--yaml"}},
		{"place, bare --json", place, []string{"--json"}, []string{"-yaml"}},
		{"bench fgd", fgd, []string{"--json=-"}, []string{"--yaml"}},
		{"plan", plan, []string{"--json", "-"}, []string{"--yaml"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			jsonOut, errOut, code := runCLI(t, append(slices.Clone(tc.args), tc.json...)...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", tc.json, code, errOut)
			}
			yamlOut, errOut, code := runCLI(t, append(slices.Clone(tc.args), tc.yaml...)...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", tc.yaml, code, errOut)
			}
			var fromJSON, fromYAML any
			if err := json.Unmarshal([]byte(jsonOut), &fromJSON); err != nil {
				t.Fatalf("%v: not one JSON document: %v\n%s", tc.json, err, head(jsonOut))
			}
			if err := yaml.Unmarshal([]byte(yamlOut), &fromYAML); err != nil || strings.HasPrefix(strings.TrimSpace(yamlOut), "{") || strings.HasPrefix(strings.TrimSpace(yamlOut), "[") {
				t.Fatalf("%v: not block YAML (%v):\n%s", tc.yaml, err, head(yamlOut))
			}
			if a, b := asJSON(t, fromJSON), asJSON(t, fromYAML); a != b {
				t.Errorf("--yaml and --json differ:\n%s\n%s", head(a), head(b))
			}
		})
	}
}

// asJSON writes v as JSON, so that documents read from JSON and from YAML
// compare alike.
func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var norm any
	json.Unmarshal(b, &norm)
	b, _ = json.Marshal(norm)
	return string(b)
}

// A job's own arguments are its own: corral submit's --yaml after the
// job's command is the job's, and corral run refuses --json and --yaml
// before it (it prints the job's output).
func TestYAMLIsNotTakenFromTheJobsArguments(t *testing.T) {
	rest, _, ok := withoutYAML(mustLookup(t, "submit"), []string{"-G", "1", "python", "train.py", "--yaml"})
	if ok {
		t.Errorf("submit: took the job's --yaml: %v", rest)
	}
	rest, _, ok = withoutYAML(mustLookup(t, "submit"), []string{"-G1", "--yaml", "--", "python", "--yaml"})
	if want := []string{"-G", "1", "--", "python", "--yaml"}; !ok || !slices.Equal(rest, want) {
		t.Errorf("submit: %v %v, want %v", rest, ok, want)
	}
	if _, errOut, code := runCLI(t, "run", "--yaml", "--", "true"); code != 2 || !strings.Contains(errOut, "corral submit --json") {
		t.Errorf("run --yaml: exit %d, %q", code, errOut)
	}
}

func mustLookup(t *testing.T, name string) command {
	t.Helper()
	c, ok := lookup(name)
	if !ok {
		t.Fatalf("no command %s", name)
	}
	return c
}
