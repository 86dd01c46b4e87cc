package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// simDocOf runs corral sim with --json and decodes what it wrote.
func simDocOf(t *testing.T, args ...string) (string, map[string]any) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sim.json")
	out, errOut, code := runCLI(t, append(append([]string{"sim"}, args...), "--json", path)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return out, doc
}

// at walks a decoded JSON document along a dotted path.
func at(t *testing.T, doc any, path string) any {
	t.Helper()
	v := doc
	for _, k := range strings.Split(path, ".") {
		switch c := v.(type) {
		case map[string]any:
			v = c[k]
		case []any:
			var i int
			if _, err := fmt.Sscan(k, &i); err != nil || i >= len(c) {
				t.Fatalf("%s: no index %s", path, k)
			}
			v = c[i]
		default:
			t.Fatalf("%s: nothing at %s", path, k)
		}
	}
	return v
}

// On 16 nodes for 7 days one job asks for all 128 GPUs, more than its
// tenant's quota with everything the cohort could lend (127.997): it is
// refused at arrival, listed with the reason, counted in the JSON, and its
// story says so.
func TestSimCommandRefusesJobsOverQuotaForever(t *testing.T) {
	out, doc := simDocOf(t, "--nodes", "16", "--days", "7", "--explain", "job-000060")
	for _, want := range []string{"refused: over quota forever: 1 jobs (64 GPU-h of work)",
		"job-000060       tenant research     128.00 GPUs", "is 127.997 GPUs; the job needs 128.000",
		"job-000060 under slurm-like:\n     167.03h  refused: over quota forever"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, policy := range []string{"corral", "kube-default", "kueue-like", "slurm-like"} {
		if n := at(t, doc, "policies."+policy+".refused_over_quota"); n != 1.0 {
			t.Errorf("%s: refused_over_quota %v, want 1", policy, n)
		}
	}
	if name := at(t, doc, "results.0.refused.0.name"); name != "job-000060" {
		t.Errorf("results[0].refused[0] is %v", name)
	}
}
