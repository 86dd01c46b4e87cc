package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
)

// parseSubmit reads submit's arguments into the request it would send,
// with environ as the client's environment.
func parseSubmit(args []string, environ []string, stderr io.Writer) (api.JobRequest, error) {
	fs, _ := clientFlagSet("submit", stderr)
	var r api.JobRequest
	var sf submitFlags
	defineSubmitFlags(fs, &r, &sf)
	if err := parseLeadingFlags(fs, submitUsage, args); err != nil {
		return r, err
	}
	return buildRequest(fs, &r, &sf, environ, stderr)
}

func TestSubmitTakesSlurmFlags(t *testing.T) {
	for _, tc := range []struct {
		args  string
		check func(api.JobRequest) bool
	}{
		{"-G 8 -n 4 -t 90 -J x true", func(r api.JobRequest) bool {
			return r.GPUs == 2 && r.Tasks == 4 && r.Time == "90" && r.Name == "x"
		}},
		{"--gpus-per-task=1 --ntasks=2 --time=1-12:00:00 --job-name=y true", func(r api.JobRequest) bool {
			return r.GPUs == 1 && r.Tasks == 2 && r.Time == "1-12:00:00" && r.Name == "y"
		}},
		{"-G8 -n4 -t1:00:00 -Jglued true", func(r api.JobRequest) bool {
			return r.GPUs == 2 && r.Tasks == 4 && r.Time == "1:00:00" && r.Name == "glued"
		}},
		{"--gpus 2 --tasks 2 --name old --time 2h --cpu 2 --workdir /tmp true", func(r api.JobRequest) bool {
			return r.GPUs == 1 && r.Tasks == 2 && r.Name == "old" && r.Time == "2h" && r.CPU == 2 && r.WorkDir == "/tmp"
		}},
		{"-G 4 -n 4 true", func(r api.JobRequest) bool { return r.GPUs == 1 && r.Tasks == 4 }},
		{"--gpus-per-task 4 -n 2 true", func(r api.JobRequest) bool { return r.GPUs == 4 && r.Tasks == 2 }},
		{"--mem 32G -n 2 -G 2 true", func(r api.JobRequest) bool { return r.MemoryMiB == 16<<10 }},
		{"--mem-per-cpu 4G -c 8 -G 1 true", func(r api.JobRequest) bool { return r.MemoryMiB == 32<<10 && r.CPU == 8 }},
		{"--mem-per-gpu 10G --gpus-per-task 2 true", func(r api.JobRequest) bool { return r.MemoryMiB == 20<<10 }},
		{"--cpus-per-gpu 6 --gpus-per-task 2 true", func(r api.JobRequest) bool { return r.CPU == 12 }},
		{"--nice 5 --priority 3 -G 1 true", func(r api.JobRequest) bool { return r.Priority == -2 }},
		{"-a 0-9%2 -d afterok:17 -H -o out-%j --open-mode append --signal USR1@60 -G 1 true", func(r api.JobRequest) bool {
			return r.Array == "0-9%2" && r.Dependency == "afterok:17" && r.Hold && r.Output == "out-%j" && r.OpenMode == "append" && r.Signal == "USR1@60"
		}},
		{"-N 1 -A physics --qos high -p gpu --exclusive -G 1 true", func(r api.JobRequest) bool { return r.GPUs == 1 }},
		{"--gres gpu:8 -n 4 true", func(r api.JobRequest) bool { return r.GPUs == 2 && r.Tasks == 4 }},
		{"--gres=gpu true", func(r api.JobRequest) bool { return r.GPUs == 1 }},
		{"--gres gpu:h100:2 true", func(r api.JobRequest) bool { return r.GPUs == 2 }},
		{"--gpus h100:2 true", func(r api.JobRequest) bool { return r.GPUs == 2 }},
		{"--gres gpu:1g.10gb:2 -n 2 true", func(r api.JobRequest) bool { return r.MIG == "1g.10gb" && r.GPUs == 0 }},
		{"--mem 16G -G 1 true", func(r api.JobRequest) bool { return r.MemoryMiB == 16<<10 }},
		{"--mem 512 -G 1 true", func(r api.JobRequest) bool { return r.MemoryMiB == 512 }},
		{"--mem=1.5T -G 1 true", func(r api.JobRequest) bool { return r.MemoryMiB == 1536<<10 }},
		{"-c 4 -D /tmp -G 1 true", func(r api.JobRequest) bool { return r.CPU == 4 && r.WorkDir == "/tmp" }},
		{"--cpus-per-task 8 --chdir /srv -G 1 true", func(r api.JobRequest) bool { return r.CPU == 8 && r.WorkDir == "/srv" }},
		{"--gpus 0 true", func(r api.JobRequest) bool { return r.GPUs == 0 }},
		{"--gres gpu:0 true", func(r api.JobRequest) bool { return r.GPUs == 0 }},
		{"--mig 1g.10gb true", func(r api.JobRequest) bool { return r.MIG == "1g.10gb" }},
		{"--share 0.5 --priority -1 true", func(r api.JobRequest) bool { return r.Share == 0.5 && r.Priority == -1 }},
		{"-G 1 -- sh -c -n", func(r api.JobRequest) bool { return slices.Equal(r.Command, []string{"sh", "-c", "-n"}) }},
	} {
		r, err := parseSubmit(strings.Fields(tc.args), nil, io.Discard)
		if err != nil || !tc.check(r) {
			t.Errorf("submit %s: %+v, %v", tc.args, r, err)
		}
	}
	if r, err := parseSubmit([]string{"--wrap", "echo hi", "-G", "1"}, nil, io.Discard); err != nil || r.Script != "#!/bin/sh\necho hi\n" || r.Command[0] != "wrap" {
		t.Errorf("--wrap: script %q, command %q, %v; want a shell script named wrap, as sbatch's", r.Script, r.Command, err)
	}
}

func TestSubmitRefusesBadSlurmFlags(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"true", "no GPUs asked for"},
		{"-t 1:2:3:4 -G 1 true", `invalid value "1:2:3:4" for flag -t`},
		{"--time=forever -G 1 true", `for flag -time: not a time limit; want minutes (90), M:S, H:M:S, D-H, D-H:M, D-H:M:S`},
		{"--mem 0 -G 1 true", "--mem=0"},
		{"--mem lots -G 1 true", "memory size"},
		{"--gres gpu:3 -n 2 true", "--gres gpu:3 for 2 tasks"},
		{"--gres shard:1 true", "only gpu"},
		{"--gres gpu:1g.10gb:2 true", "one MIG slice"},
		{"-G 1 --gres gpu:1 true", "one of -G/--gpus, --gpus-per-task and --gres"},
		{"-G 3 -n 2 true", "--gpus 3 for 2 tasks"},
		{"-N 2 -G 1 true", "this server is one machine"},
		{"--mem 1G --mem-per-cpu 1G -G 1 true", "one of --mem, --mem-per-cpu"},
		{"--begin soon -G 1 true", "--begin \"soon\""},
		{"--kill-on-invalid-dep maybe -G 1 true", "want yes or no"},
		{"-n 0 -G 1 true", "-n/--tasks 0"},
		{"--share 0 true", "--share 0"},
		{"--gpus -1 true", "negative"},
		{"--export=NONE,A=1 -G 1 true", "--export: NONE takes no variables"},
		{"--export=A-B -G 1 true", `--export: variable "A-B"`},
	} {
		if _, err := parseSubmit(strings.Fields(tc.args), nil, io.Discard); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("submit %s: %v; want an error saying %q", tc.args, err, tc.want)
		}
	}
}

func TestSubmitExportsTheEnvironmentAsSbatch(t *testing.T) {
	environ := []string{"PATH=/usr/bin", "HF_TOKEN=hf", "CORRAL_TOKEN=crl_x", "CORRAL_SERVER=http://x",
		"SLURM_JOB_ID=9", "RANK=3", "CUDA_VISIBLE_DEVICES=1", "PWD=/x", "BIG=" + strings.Repeat("x", api.MaxArgBytes+1)}
	for _, tc := range []struct {
		args string
		want []string
		note string
	}{
		{"-G 1 true", []string{"PATH=/usr/bin", "HF_TOKEN=hf"}, "not sending BIG"},
		{"-G 1 --export=ALL,X=1 --env Y=2 true", []string{"PATH=/usr/bin", "HF_TOKEN=hf", "X=1", "Y=2"}, ""},
		{"-G 1 --export=NONE --env Y=2 true", []string{"Y=2"}, ""},
		{"-G 1 --export=HF_TOKEN,CORRAL_TOKEN,X=1 true", []string{"HF_TOKEN=hf", "CORRAL_TOKEN=crl_x", "X=1"}, ""},
	} {
		var note strings.Builder
		r, err := parseSubmit(strings.Fields(tc.args), environ, &note)
		if err != nil || !slices.Equal(r.Env, tc.want) || !strings.Contains(note.String(), tc.note) {
			t.Errorf("submit %s: env %q, note %q, %v; want %q", tc.args, r.Env, note.String(), err, tc.want)
		}
	}
	var many []string
	for i := range api.MaxEnv + 1 {
		many = append(many, "V"+strings.Repeat("x", i%7)+string(rune('A'+i%26))+"_"+strings.Repeat("1", i/26+1)+"=1")
	}
	if _, err := parseSubmit([]string{"-G", "1", "true"}, many, io.Discard); err == nil || !strings.Contains(err.Error(), "--export=NONE") {
		t.Errorf("an environment of %d variables: %v; want an error pointing to --export", len(many), err)
	}
}

func TestSubmitJobFileAndZeroGPUs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		return p
	}
	noGPU := write("nogpu.yaml", "command: [true]\n")
	zero := write("zero.yaml", "command: [true]\ngpus: 0\ntime: 1-00:00:00\n")
	if _, err := parseSubmit([]string{"-f", noGPU}, nil, io.Discard); err == nil || !strings.Contains(err.Error(), "no GPUs asked for") {
		t.Errorf("a job file without GPUs: %v; want refused", err)
	}
	if r, err := parseSubmit([]string{"-f", noGPU, "-G", "2", "-t", "30"}, nil, io.Discard); err != nil || r.GPUs != 2 || r.Time != "30" {
		t.Errorf("a job file with -G 2 -t 30: %+v, %v", r, err)
	}
	if r, err := parseSubmit([]string{"-f", zero}, nil, io.Discard); err != nil || r.GPUs != 0 || r.Time != "1-00:00:00" {
		t.Errorf("a job file with gpus: 0: %+v, %v; want taken", r, err)
	}
}

// TestMistypedFlagIsOneLine checks that a flag error is one line naming
// the flag and pointing to -h, not the whole usage.
func TestMistypedFlagIsOneLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"submit", "--gpu", "1", "true"}, "-gpu"},
		{[]string{"queue", "--stat", "pending"}, "-stat"},
		{[]string{"cancel", "--usr", "x"}, "-usr"},
		{[]string{"server", "--devv"}, "-devv"},
		{[]string{"server", "tenant", "--quotas", "1", "create", "x"}, "-quotas"},
	} {
		var errOut strings.Builder
		code := run(tc.args, io.Discard, &errOut)
		msg := errOut.String()
		name := tc.args[0]
		if tc.args[1] == "tenant" {
			name = "server tenant"
		}
		want := "corral " + name + ": flag provided but not defined: " + tc.flag + "\nrun 'corral " + name + " -h' for usage\n"
		if code != 2 || msg != want {
			t.Errorf("corral %v: exit %d, stderr %q; want exit 2 and %q: one line naming %s and a hint to -h", tc.args, code, msg, want, tc.flag)
		}
	}
}

func TestTenantHelpNeedsNoToken(t *testing.T) {
	t.Setenv("CORRAL_TOKEN", "")
	for _, args := range [][]string{{"server", "tenant", "-h"}, {"server", "tenant", "--help"}, {"server", "tenant", "create", "-h"}} {
		var out strings.Builder
		if code := run(args, &out, io.Discard); code != 0 || !strings.Contains(out.String(), "Usage: corral server tenant") {
			t.Errorf("corral %v: exit %d, %q; want the help on stdout", args, code, out.String())
		}
	}
	var errOut strings.Builder
	if code := run([]string{"server", "tenant", "frobnicate"}, io.Discard, &errOut); code == 0 || strings.Contains(errOut.String(), "token") && !strings.Contains(errOut.String(), tenantVerbs) {
		t.Errorf("tenant frobnicate: exit %d, %q; want the verbs named, not a token asked for", code, errOut.String())
	}
}

func TestSubmitHelpListsSlurmNames(t *testing.T) {
	var out strings.Builder
	run([]string{"submit", "-h"}, &out, io.Discard)
	for _, want := range []string{"-tasks, -n, -ntasks, -ntasks-per-node int", "-gpus, -G, -gpus-per-node GPUs", "-gpus-per-task GPUs", "-time, -t limit",
		"-export string", `(default "ALL")`, "Taken and ignored (one machine):", "-partition"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("submit -h lacks %q:\n%s", want, out.String())
		}
	}
}

func TestServerURLIsUsable(t *testing.T) {
	host, _ := os.Hostname()
	for _, tc := range []struct{ scheme, addr, want string }{
		{"http", "[::]:7070", "http://127.0.0.1:7070"},
		{"http", "0.0.0.0:7070", "http://127.0.0.1:7070"},
		{"http", "127.0.0.1:7070", "http://127.0.0.1:7070"},
		{"http", "[::1]:7070", "http://[::1]:7070"},
		{"http", "10.1.2.3:80", "http://10.1.2.3:80"},
		{"https", "[::]:443", "https://" + host + ":443"},
	} {
		if got := serverURL(tc.scheme, tc.addr); got != tc.want {
			t.Errorf("serverURL(%s, %s) = %s, want %s", tc.scheme, tc.addr, got, tc.want)
		}
	}
}

// TestCLISlurmHabitsAgainstServer drives submit's Slurm flags, the
// exported environment, queue --json and cancel's filters against a real
// server.
func TestCLISlurmHabitsAgainstServer(t *testing.T) {
	db := filepath.Join(t.TempDir(), "corral.db")
	srv := startServerChild(t, "--db", db, "--gpus", "2xA100-80GB", "--listen", anyLoopbackPort, "--new-admin-token")
	t.Setenv("CORRAL_SERVER", srv.url)
	t.Setenv("CORRAL_TOKEN", srv.token)
	t.Setenv("MY_VAR", "hello")
	t.Setenv("SLURM_JOB_ID", "99")
	c := &client.Client{Server: srv.url, Token: srv.token}
	jobsAsNobody(t, c, filepath.Dir(db))
	cli := func(args ...string) (string, string, int) {
		var out, errOut strings.Builder
		code := run(args, &out, &errOut)
		return out.String(), errOut.String(), code
	}
	out, errOut, _ := cli("submit", "-J", "env", "-G1", "-t", "5", "--json", "--", "sh", "-c", `echo "$MY_VAR ${CORRAL_TOKEN:-notoken} ${SLURM_JOB_ID:-noslurm} $A"`)
	var j api.Job
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("submit: %q %q", out, errOut)
	}
	waitJob(t, c, j.ID, func(j api.Job) bool { return j.State == "succeeded" })
	own := strings.TrimLeft(strings.TrimPrefix(j.ID, "j"), "0")
	if logs, _, _ := cli("logs", j.ID); logs != "hello notoken "+own+" \n" {
		t.Errorf("the job's environment: %q; want MY_VAR, no token, and its own SLURM_JOB_ID %s, not the client's 99", logs, own)
	}
	for _, tc := range []struct{ args, want string }{
		{"--gpus 3 true", "the largest node has 2 GPUs"},
		{"--gres gpu:h100:1 true", "this server's GPUs are A100-80GB"},
		{"-G 1 --mem 10T true", "the largest node has 2 TiB"},
		{"true", "no GPUs asked for"},
	} {
		if _, errOut, code := cli(append([]string{"submit"}, strings.Fields(tc.args)...)...); code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("submit %s: exit %d, %q; want %q", tc.args, code, errOut, tc.want)
		}
	}
	for _, args := range [][]string{{"queue", "--json", "--all"}, {"queue", "--json", "--state", "preempted"}} {
		out, _, _ := cli(args...)
		var l map[string][]api.Job
		if err := json.Unmarshal([]byte(out), &l); err != nil || l["jobs"] == nil || len(l) != 1 {
			t.Errorf("corral %v: %q, %v; want the API's {\"jobs\": [...]}", args, out, err)
		}
	}
	cancelFilters(t, c, cli)
}

// cancelFilters cancels by name and state, then by tenant, and a running
// job with 100 waiting behind it by ID: none of those must start.
func cancelFilters(t *testing.T, c *client.Client, cli func(...string) (string, string, int)) {
	t.Helper()
	submit := func(args ...string) string {
		out, errOut, code := cli(append([]string{"submit"}, args...)...)
		if code != 0 {
			t.Fatalf("submit %v: %s", args, errOut)
		}
		return strings.TrimPrefix(strings.TrimSpace(out), "Submitted job ")
	}
	block := submit("-G", "2", "-J", "block", "sleep", "60")
	waitJob(t, c, block, func(j api.Job) bool { return j.State == "running" })
	var sweep []string
	for range 3 {
		sweep = append(sweep, submit("-G", "1", "-J", "sweep", "sleep", "60"))
	}
	other := submit("-G", "1", "-J", "other", "sleep", "60")
	if out, errOut, code := cli("cancel", "--state", "pending", "-n", "sweep"); code != 0 || strings.Count(out, "Cancelled job") != 3 {
		t.Fatalf("cancel --state pending -n sweep: %q %q", out, errOut)
	}
	if j, _ := c.Job(t.Context(), other); j.State != "pending" {
		t.Fatalf("job %s named other is %s after cancelling the sweep", other, j.State)
	}
	if out, _, code := cli("cancel", "-u", "admin"); code != 0 || !strings.Contains(out, "Stopping job "+block) || !strings.Contains(out, "Cancelled job "+other) {
		t.Fatalf("cancel -u admin: %q", out)
	}
	waitJob(t, c, block, func(j api.Job) bool { return j.State == "cancelled" })

	first := submit("-G", "2", "sleep", "60")
	waitJob(t, c, first, func(j api.Job) bool { return j.State == "running" })
	ids := []string{first}
	for range 100 {
		ids = append(ids, submit("-G", "1", "sleep", "60"))
	}
	if out, errOut, code := cli(append([]string{"cancel"}, ids...)...); code != 0 || strings.Count(out, "\n") != len(ids) {
		t.Fatalf("cancel %d jobs: exit %d, %d lines, %q", len(ids), code, strings.Count(out, "\n"), errOut)
	}
	waitJob(t, c, first, func(j api.Job) bool { return j.State == "cancelled" })
	for _, id := range append(ids[1:], sweep...) {
		if j, _ := c.Job(t.Context(), id); j.State != "cancelled" || j.Attempts != 0 {
			t.Errorf("%s: %s after %d starts; want cancelled without starting", id, j.State, j.Attempts)
		}
	}
}

// TestLogsTail prints only a job's last lines, and refuses a tail that
// follows.
func TestLogsTail(t *testing.T) {
	db := filepath.Join(t.TempDir(), "corral.db")
	c := cliServer(t, db, "1xA100-80GB")
	j, err := c.Submit(context.Background(), api.JobRequest{GPUs: 1, Command: []string{"sh", "-c", "echo a; echo b; echo c"}})
	if err != nil {
		t.Fatal(err)
	}
	waitJob(t, c, j.ID, func(j api.Job) bool { return j.State == "succeeded" })
	var out, errOut strings.Builder
	if code := run([]string{"logs", "--tail", "2", j.ID}, &out, &errOut); code != 0 || out.String() != "b\nc\n" {
		t.Fatalf("logs --tail 2: exit %d, %q %q; want the last two lines", code, out.String(), errOut.String())
	}
	errOut.Reset()
	if code := run([]string{"logs", "--tail", "2", "-f", j.ID}, io.Discard, &errOut); code == 0 || !strings.Contains(errOut.String(), "not both") {
		t.Fatalf("logs --tail -f: exit %d, %q; want a refusal", code, errOut.String())
	}
}
