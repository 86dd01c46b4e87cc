package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// smallScale is a run small enough for -race: 200 nodes, short streams.
var smallScale = []string{"bench", "scale", "--nodes", "200", "--decisions", "2000", "--gang-trials", "10", "--gangs", "50", "--quiet"}

// tinyScale is smaller still, for tests that run it several times.
var tinyScale = []string{"--nodes", "100", "--decisions", "500", "--gang-trials", "4", "--gangs", "20"}

func runScaleJSON(t *testing.T, extra ...string) (map[string]any, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "scale.json")
	out, stderr, code := runCLI(t, append(append(append([]string{}, smallScale...), "--json", path), extra...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc, out
}

func TestBenchScaleJSON(t *testing.T) {
	doc, out := runScaleJSON(t)
	for _, want := range []string{"corral bench scale: 200 nodes", "pod decisions/s", "gang512 p50 / p99", "mixed gangs", "wrote "} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	num := func(key string) float64 {
		t.Helper()
		v, ok := doc[key].(float64)
		if !ok {
			t.Fatalf("field %q missing or not a number: %v", key, doc[key])
		}
		return v
	}
	for _, key := range []string{
		"nodes", "gpus", "gpus_per_node", "seed", "gomaxprocs", "heap_bytes",
		"fleet_build_seconds", "state_build_seconds",
		"decisions", "decisions_placed", "decisions_per_sec", "decisions_per_sec_place_only",
		"p50_decision_ms", "p90_decision_ms", "p99_decision_ms", "p999_decision_ms", "max_decision_ms",
		"gang512_trials", "gang512_placed", "gang512_unfit", "gang512_p50_ms", "gang512_p99_ms",
		"mixed_gangs", "mixed_gangs_placed", "mixed_gangs_unfit", "mixed_gangs_seconds", "mixed_gangs_loop_seconds",
	} {
		if num(key) < 0 {
			t.Errorf("%s = %v, want >= 0", key, doc[key])
		}
	}
	if v, _ := doc["go_version"].(string); !strings.HasPrefix(v, "go") {
		t.Errorf("go_version %q", v)
	}
	if num("nodes") != 200 || num("gpus") != 1600 || num("seed") != 1 {
		t.Errorf("nodes %v gpus %v seed %v, want 200, 1600, 1", doc["nodes"], doc["gpus"], doc["seed"])
	}
	if num("decisions") != 2000 || num("decisions_placed")+num("decisions_unfit") != 2000 || num("decisions_placed") == 0 {
		t.Errorf("decisions %v = placed %v + unfit %v", doc["decisions"], doc["decisions_placed"], doc["decisions_unfit"])
	}
	if num("gang512_trials") != 10 || num("gang512_placed")+num("gang512_unfit") != 10 {
		t.Errorf("gang512 trials %v = placed %v + unfit %v", doc["gang512_trials"], doc["gang512_placed"], doc["gang512_unfit"])
	}
	if num("mixed_gangs") != 50 || num("mixed_gangs_placed") == 0 || num("mixed_gangs_placed")+num("mixed_gangs_unfit") != 50 {
		t.Errorf("mixed gangs %v = placed %v + unfit %v", doc["mixed_gangs"], doc["mixed_gangs_placed"], doc["mixed_gangs_unfit"])
	}
	if num("decisions_per_sec") <= 0 || num("heap_bytes") <= 0 {
		t.Errorf("decisions_per_sec %v, heap_bytes %v", doc["decisions_per_sec"], doc["heap_bytes"])
	}
	for _, q := range [][]string{
		{"p50_decision_ms", "p90_decision_ms", "p99_decision_ms", "p999_decision_ms", "max_decision_ms"},
		{"gang512_p50_ms", "gang512_p99_ms", "gang512_max_ms"},
		{"mixed_gangs_p50_ms", "mixed_gangs_p99_ms", "mixed_gangs_max_ms"},
	} {
		for i := 1; i < len(q); i++ {
			if num(q[i-1]) > num(q[i]) {
				t.Errorf("%s %v > %s %v", q[i-1], doc[q[i-1]], q[i], doc[q[i]])
			}
		}
	}
	if lo, mean, hi := num("occupancy_min_pct"), num("occupancy_mean_pct"), num("occupancy_max_pct"); lo > mean || mean > hi || hi > 81 {
		t.Errorf("occupancy %v / %v / %v", lo, mean, hi)
	}
	th, _ := doc["thresholds"].(map[string]any)
	pass, _ := doc["pass"].(map[string]any)
	for _, key := range []string{"min_decisions_per_sec", "max_p99_decision_ms", "max_gang512_p99_ms", "max_mixed_gangs_seconds"} {
		if _, ok := th[key].(float64); !ok {
			t.Errorf("thresholds lack %q: %v", key, th)
		}
	}
	for _, key := range []string{"decisions_per_sec", "p99_decision_ms", "gang512_p99_ms", "mixed_gangs_seconds", "all"} {
		if _, ok := pass[key].(bool); !ok {
			t.Errorf("pass lacks %q: %v", key, pass)
		}
	}
}

// TestBenchScaleDeterministic checks that a seed fixes every decision: the
// counts match between runs, and another seed changes them.
func TestBenchScaleDeterministic(t *testing.T) {
	counts := func(doc map[string]any) []any {
		var out []any
		for _, k := range []string{"decisions_placed", "releases", "warmup_placed", "gang512_placed", "gang512_fill_jobs", "mixed_gangs_placed", "mixed_gangs_released", "mixed_gangs_gpus_placed"} {
			out = append(out, doc[k])
		}
		return out
	}
	a, _ := runScaleJSON(t, tinyScale...)
	b, _ := runScaleJSON(t, tinyScale...)
	c, _ := runScaleJSON(t, append(tinyScale, "--seed", "7")...)
	ca, cb, cc := counts(a), counts(b), counts(c)
	for i := range ca {
		if ca[i] != cb[i] {
			t.Errorf("same seed, different counts: %v vs %v", ca, cb)
			break
		}
	}
	same := true
	for i := range ca {
		same = same && ca[i] == cc[i]
	}
	if same {
		t.Errorf("seeds 1 and 7 gave the same counts %v", ca)
	}
}

func TestBenchScaleErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no nodes", []string{"--nodes", "0"}, "--nodes 0: want 1 to"},
		{"negative gpus", []string{"--gpus-per-node", "-1"}, "--gpus-per-node -1: want 1 to 64"},
		{"mig percent", []string{"--mig-pct", "101"}, "--mig-pct 101"},
		{"negative decisions", []string{"--decisions", "-5"}, "--decisions -5"},
		{"no gangs", []string{"--gangs", "0"}, "--gangs 0"},
		{"not a number", []string{"--nodes", "many"}, "invalid value"},
		{"stray argument", []string{"extra"}, `unexpected argument "extra"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, append([]string{"bench", "scale"}, c.args...)...)
			if code == 0 || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want failure mentioning %q", code, stderr, c.want)
			}
		})
	}
}

func TestBenchScaleHelp(t *testing.T) {
	stdout, _, code := runCLI(t, "bench", "scale", "-h")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"Usage: corral bench scale", "decisions_per_sec", "p99_decision_ms", "gang512_p99_ms", "mixed_gangs_seconds", "heap_bytes", "-nodes", "-gpus-per-node", "-seed"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	if out, _, _ := runCLI(t, "bench"); !strings.Contains(out, "scale") {
		t.Errorf("bench help does not list scale:\n%s", out)
	}
}
