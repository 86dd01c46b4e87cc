package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/sim"
)

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestBenchFGDBuiltInExample(t *testing.T) {
	out, _, code := runCLI(t, "bench", "fgd", "--seeds", "42-43", "--policies", "fgd,corral,random", "--bound=false")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"example", "unalloc% @100", "fgd", "corral", "random"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestBenchFGDJSONIsStableAndDeterministic(t *testing.T) {
	dir := t.TempDir()
	args := func(path string) []string {
		return []string{"bench", "fgd", "--seeds", "42,44", "--policies", "random,fgd", "--timing=false", "--bound=false", "--json", path}
	}
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, p := range []string{a, b} {
		if _, stderr, code := runCLI(t, args(p)...); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	}
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if !bytes.Equal(da, db) {
		t.Fatal("two runs with the same seeds wrote different JSON")
	}
	var doc struct {
		Runs []map[string]any `json:"runs"`
	}
	if err := json.Unmarshal(da, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) != 4 {
		t.Fatalf("got %d runs, want 4", len(doc.Runs))
	}
	for _, key := range []string{"trace", "policy", "seed", "unallocated_pct_at_100", "unallocated_pct_at_130", "unallocated_pct_at_first_failure", "seconds"} {
		if _, ok := doc.Runs[0][key]; !ok {
			t.Errorf("run lacks the %q field", key)
		}
	}
	if doc.Runs[0]["policy"] != "random" || doc.Runs[0]["seed"] != 42.0 || doc.Runs[1]["seed"] != 44.0 {
		t.Errorf("runs out of order: %v / %v", doc.Runs[0], doc.Runs[1])
	}
}

func TestBenchFGDErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown policy", []string{"--policies", "fgd,nope"}, `unknown policy "nope"`},
		{"bad seeds", []string{"--seeds", "9-1"}, "must go up"},
		{"nodes without pods", []string{"--nodes", "x.csv"}, "give both --nodes and --pods"},
		{"missing file", []string{"--nodes", "/nonexistent/n.csv", "--pods", "p.csv"}, "/nonexistent/n.csv"},
		{"stray argument", []string{"extra"}, `unexpected argument "extra"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, append([]string{"bench", "fgd"}, c.args...)...)
			if code == 0 || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want failure mentioning %q", code, stderr, c.want)
			}
		})
	}
}

func TestBenchFGDReadsOpenbFiles(t *testing.T) {
	dir := t.TempDir()
	nodes := "sn,cpu_milli,memory_mib,gpu,model\nn1,32000,65536,2,T4\nn2,32000,65536,4,T4\n"
	pods := "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,1000,1024,1,500\np2,1000,1024,1,1000\np3,2000,1024,0,0\n"
	np, pp := filepath.Join(dir, "nodes.csv"), filepath.Join(dir, "tiny.csv")
	os.WriteFile(np, []byte(nodes), 0o644)
	os.WriteFile(pp, []byte(pods), 0o644)
	out, stderr, code := runCLI(t, "bench", "fgd", "--nodes", np, "--pods", pp, "--seeds", "1", "--policies", "fgd", "--bound=false")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "tiny") {
		t.Errorf("trace name missing:\n%s", out)
	}
}

func TestHelpAndUnknownCommand(t *testing.T) {
	if _, stderr, code := runCLI(t); code != 2 || !strings.Contains(stderr, "corral -h") {
		t.Errorf("no argument: exit %d, want 2 and a short usage on stderr\n%s", code, stderr)
	}
	if out, _, code := runCLI(t, "help"); code != 0 || !strings.Contains(out, "bench") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
	if _, stderr, code := runCLI(t, "frobnicate"); code != 2 || !strings.Contains(stderr, "unknown command") {
		t.Errorf("unknown command: exit %d, %s", code, stderr)
	}
	if stdout, _, code := runCLI(t, "bench", "fgd", "-h"); code != 0 || !strings.Contains(stdout, "Usage: corral bench fgd") {
		t.Errorf("bench fgd -h: exit %d\n%s", code, stdout)
	}
}

func TestPlaceCommand(t *testing.T) {
	var out, errb bytes.Buffer
	jsonPath := filepath.Join(t.TempDir(), "placements.json")
	code := run([]string{"place", "--fleet", "../../examples/fleets/h100-superpod.yaml", "--json", jsonPath, "../../examples/jobs/mixed.yaml"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"embed-service        4 tasks on 1 zone, 1 spine, 1 block, 4 racks, 4 nodes", "too-big              does not fit: needs 640 GPUs", "6 of 7 jobs placed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var results []placedJob
	if err := json.Unmarshal(data, &results); err != nil {
		t.Fatal(err)
	}
	if len(results) != 7 || !results[0].Placed || results[6].Placed || len(results[0].Tasks) != 24 {
		t.Errorf("JSON results: %d jobs, first placed %v with %d tasks", len(results), results[0].Placed, len(results[0].Tasks))
	}
}

func TestPlaceCommandBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: x\ngpus: 1\ncolour: red\n"), 0o644)
	for _, args := range [][]string{
		{"place"},
		{"place", "--fleet", "../../examples/fleets/small.yaml"},
		{"place", "--fleet", "missing.yaml", bad},
		{"place", "--fleet", "../../examples/fleets/small.yaml", bad},
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code == 0 {
			t.Errorf("%v: exit 0, want an error", args)
		}
		if errb.Len() == 0 {
			t.Errorf("%v: no message on stderr", args)
		}
	}
}

func TestSimCommand(t *testing.T) {
	jsonPath, demandDir := filepath.Join(t.TempDir(), "sim.json"), t.TempDir()
	out, errOut, code := runCLI(t, "sim", "--nodes", "32", "--days", "3", "--load", "0.9", "--json", jsonPath, "--demand-dir", demandDir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"corral ", "kube-default ", "kube-packed ", "kueue-like ", "kueue-strict ", "slurm-like ", "slurm-exclusive ", "volcano-like ", "kai-like ", "wait mean", "Jain", "research"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Input   string
		Results []struct {
			Policy  string
			Summary struct {
				Jobs        int
				Utilisation float64
			}
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Results) != len(sim.PolicyNames()) || doc.Results[0].Summary.Jobs == 0 || doc.Results[0].Summary.Utilisation <= 0 {
		t.Errorf("JSON: %+v", doc)
	}
	// The stable fields outside tools read, per policy.
	var stable struct {
		Policies map[string]map[string]float64
		Results  []map[string]any
	}
	if err := json.Unmarshal(data, &stable); err != nil {
		t.Fatal(err)
	}
	for _, policy := range sim.PolicyNames() {
		fields := stable.Policies[policy]
		for _, key := range []string{"mean_wait_s", "p99_wait_s", "mean_jct_s", "gpu_allocation_pct", "lost_gpu_hours", "preemptions", "deadlocked_gangs"} {
			if _, ok := fields[key]; !ok {
				t.Errorf("policies.%s lacks %s", policy, key)
			}
		}
		if fields["gpu_allocation_pct"] <= 0 || fields["gpu_allocation_pct"] > 100 || fields["mean_jct_s"] <= 0 {
			t.Errorf("policies.%s: %v", policy, fields)
		}
	}
	for _, r := range stable.Results {
		if _, ok := r["mean_wait_s"]; !ok || r["policy"] == nil {
			t.Errorf("result without stable fields: %v", r)
		}
	}
	// One demand row per hour of the 3-day horizon and more, none above the fleet.
	csv, err := os.ReadFile(filepath.Join(demandDir, "corral.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	if lines[0] != "hour,gpu_model,gpus" || len(lines) < 1+73 {
		t.Fatalf("demand CSV: %d lines, header %q", len(lines), lines[0])
	}
	busy := 0
	for i, l := range lines[1:] {
		var hour, gpus int
		var model string
		if _, err := fmt.Sscanf(strings.ReplaceAll(l, ",", " "), "%d %s %d", &hour, &model, &gpus); err != nil || hour != i || model != "H100-80GB" || gpus < 0 || gpus > 256 {
			t.Fatalf("demand row %d: %q (%v)", i, l, err)
		}
		busy += gpus
	}
	if busy == 0 {
		t.Error("no card was ever occupied")
	}
}

func TestSimCommandBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"sim", "--nodes", "0"},
		{"sim", "--load", "-1"},
		{"sim", "--policies", "corral,nosuch"},
		{"sim", "--workload", "openb"},
		{"sim", "--workload", "tea"},
		{"sim", "extra"},
		{"sim", "--preempt-grace", "-1m"},
		{"sim", "--autoscale", "two"},
		{"sim", "--backfill", "greedy"},
		{"sim", "--autoscale", "4:2"},
	} {
		_, errOut, code := runCLI(t, args...)
		if code == 0 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q; want an error", args, code, errOut)
		}
	}
}

func TestSimCommandWithFaults(t *testing.T) {
	out, errOut, code := runCLI(t, "sim", "--nodes", "32", "--days", "3", "--spot-share", "0.5", "--spot-rate", "0.05", "--mtbf", "200h", "--policies", "corral")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "16 spot nodes") || !strings.Contains(out, "lost GPU-h") || !strings.Contains(out, "faults under corral: ") {
		t.Errorf("output lacks the fault summary:\n%s", out)
	}
	if _, errOut, code := runCLI(t, "sim", "--spot-share", "2"); code == 0 || errOut == "" {
		t.Errorf("--spot-share 2 accepted")
	}
}

func TestSimCommandExplain(t *testing.T) {
	out, errOut, code := runCLI(t, "sim", "--nodes", "16", "--days", "2", "--policies", "corral,slurm-like", "--explain", "job-000001")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"job-000001 under corral:", "job-000001 under slurm-like:", "arrives from tenant"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestSimCommandAutoscales(t *testing.T) {
	out, errOut, code := runCLI(t, "sim", "--nodes", "32", "--days", "2", "--policies", "corral", "--autoscale", "0:", "--provision-delay", "10m")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var bought, share float64
	var joined, left int
	i := strings.Index(out, "corral             ")
	j := strings.LastIndex(out, "corral ")
	if i < 0 || j < 0 {
		t.Fatalf("no autoscaling line:\n%s", out)
	}
	if _, err := fmt.Sscanf(out[j:], "corral %f GPU-h bought, %f%% of", &bought, &share); err != nil {
		t.Fatalf("autoscaling line %q: %v", out[j:], err)
	}
	if _, err := fmt.Sscanf(out[strings.Index(out[j:], ";")+j:], "; %d nodes joined, %d left", &joined, &left); err != nil {
		t.Fatalf("autoscaling line %q: %v", out[j:], err)
	}
	if share <= 0 || share >= 100 || joined == 0 {
		t.Errorf("scale from zero bought %.1f%% of the fixed fleet with %d nodes joining; want a share below 100%%", share, joined)
	}
}

// readJSONFile decodes the JSON file at path into v, failing the test on
// any error.
func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
