package main

import (
	"encoding/json"
	"fmt"
	"math"
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

// On 4 nodes (32 GPUs) one job of a jobs file asks for 64 GPUs, more than
// its tenant's quota with everything the cohort could lend (the fleet's 32,
// now that quotas add up to the fleet exactly): it is refused at arrival,
// listed with the reason, counted in the JSON, and its story says so; a
// job of the whole fleet is not refused.
func TestSimCommandRefusesJobsOverQuotaForever(t *testing.T) {
	jobs := filepath.Join(t.TempDir(), "jobs.csv")
	os.WriteFile(jobs, []byte("name,submit_s,duration_s,tenant,tasks,gpus\nbig,0,3600,research,8,8\nwhole,60,3600,research,4,8\nother,120,3600,product,1,4\n"), 0o644)
	out, doc := simDocOf(t, "--workload", "jobs", jobs, "--nodes", "4", "--explain", "big")
	for _, want := range []string{"refused: over quota forever: 1 jobs (64 GPU-h of work)",
		"big              tenant research      64.00 GPUs", "can never hold more than 32 GPUs: ", "; the job needs 64 GPUs",
		"big under slurm-like:\n       0.00h  refused: over quota forever"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, policy := range []string{"corral", "kube-default", "kueue-like", "slurm-like"} {
		if n := at(t, doc, "policies."+policy+".refused_over_quota"); n != 1.0 {
			t.Errorf("%s: refused_over_quota %v, want 1", policy, n)
		}
	}
	if name := at(t, doc, "results.0.refused.0.name"); name != "big" {
		t.Errorf("results[0].refused[0] is %v", name)
	}
}

// Without --autoscale every platform pays for the whole fleet: the two
// Kubernetes platforms cost the same, and the output, the JSON and the
// HTML say why. With autoscaling there is no such note.
func TestSimCommandTCOWithoutAutoscaleSaysIdleNodesArePaid(t *testing.T) {
	page := filepath.Join(t.TempDir(), "sim.html")
	out, doc := simDocOf(t, "--nodes", "16", "--days", "3", "--tco", "--html", page)
	if !strings.Contains(out, "note: without --autoscale, idle nodes are paid in every platform") {
		t.Errorf("no note on idle nodes:\n%s", out)
	}
	if note, _ := at(t, doc, "tco_note").(string); !strings.Contains(note, "idle nodes are paid in every platform") {
		t.Errorf("tco_note %q", note)
	}
	if a, b := at(t, doc, "tco.1.total_usd"), at(t, doc, "tco.2.total_usd"); a != b {
		t.Errorf("Kubernetes totals %v and %v: without autoscaling both buy the whole fleet", a, b)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "Note: without --autoscale, idle nodes are paid in every platform") {
		t.Error("the HTML report's platform table lacks the note")
	}
	out, doc = simDocOf(t, "--nodes", "16", "--days", "3", "--tco", "--autoscale", "0:")
	if strings.Contains(out, "idle nodes are paid") || at(t, doc, "tco_note") != nil {
		t.Errorf("note given with autoscaling:\n%s", out)
	}
}

// Totals for unequal work are shown beside the cost of a useful GPU-hour
// and the work left undone, and the table says the window it bills (every
// hour until the last job ends) against the arrival window: kube-default (no gangs) leaves gangs
// deadlocked on 32 nodes over 14 days at load 0.95, corral finishes
// everything.
func TestSimCommandCostsShowWorkUndone(t *testing.T) {
	out, doc := simDocOf(t, "--nodes", "32", "--days", "14", "--load", "0.95", "--tco", "--autoscale", "0:", "--policies", "corral,kube-default,slurm-like")
	for _, want := range []string{"hours    total USD USD/useful     undone", "total USD USD/useful     undone wait mean",
		"billed for every hour\nfrom the start until the last job ends (hours): a longer window than the 336 h of arrivals",
		"left out: self-run Kubernetes, packing profile (policy kube-packed not in --policies)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	undone := at(t, doc, "policies.kube-default.work_undone_gpu_hours").(float64)
	if undone <= 0 || at(t, doc, "policies.corral.work_undone_gpu_hours") != 0.0 {
		t.Fatalf("work undone: kube-default %v, corral %v; want some, none", undone, at(t, doc, "policies.corral.work_undone_gpu_hours"))
	}
	if c := at(t, doc, "costs.kube-default.work_undone_gpu_hours"); c != undone {
		t.Errorf("costs.kube-default.work_undone_gpu_hours %v, want %v", c, undone)
	}
	bill := at(t, doc, "costs.corral.bill.total").(map[string]any)
	if per := at(t, doc, "costs.corral.usd_per_useful_gpu_hour"); per != bill["cost_usd"].(float64)/bill["used_gpu_hours"].(float64) {
		t.Errorf("corral: %v per useful GPU-hour, bill %v", per, bill)
	}
	for i, name := range []string{"managed-training", "kube-default", "kube-corral", "hpc-slurm"} {
		row := at(t, doc, fmt.Sprintf("tco.%d", i)).(map[string]any)
		per, ok := row["usd_per_useful_gpu_hour"].(float64)
		if row["platform"] != name || !ok || per <= 0 || math.Abs(per-row["total_usd"].(float64)/row["useful_gpu_hours"].(float64)) > 1e-9*per {
			t.Errorf("tco row %d: %v", i, row)
		}
		if u := row["work_undone_gpu_hours"].(float64); (name == "kube-default") != (u > 0) {
			t.Errorf("%s: %v GPU-h undone a month", name, u)
		}
	}
}

// A price older than 90 days on --now is said STALE, with its age and
// source, in the text, the JSON and the HTML of sim --tco.
func TestSimCommandTCOSaysStalePrices(t *testing.T) {
	page := filepath.Join(t.TempDir(), "sim.html")
	out, doc := simDocOf(t, "--nodes", "16", "--days", "3", "--tco", "--now", "2027-06-01", "--policies", "corral,kube-default,slurm-like", "--html", page)
	want := "STALE: aws p5.48xlarge us-east-1 on-demand: older than 90 days; data of 2026-11-09, 204 days old on 2027-06-01; source https://"
	if !strings.Contains(out, "WARNING "+want) {
		t.Errorf("text lacks %q:\n%s", want, out)
	}
	ws, _ := at(t, doc, "costs.corral.price_warnings").([]any)
	if len(ws) == 0 || !strings.HasPrefix(ws[0].(string), "STALE: ") {
		t.Errorf("json price_warnings %v", ws)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "WARNING "+want) {
		t.Error("the HTML report lacks the warning")
	}
}

// The quota a replay gives each tenant is printed above the waits, and
// in JSON; the quotas add up to the fleet's GPUs (16 nodes of 8 here).
func TestSimPrintsTheTenantsQuotas(t *testing.T) {
	out, doc := simDocOf(t, "--nodes", "16", "--days", "2", "--policies", "corral")
	if !strings.Contains(out, "tenant quota         interns     platform      product     research\nGPUs ") {
		t.Errorf("no quota table above the waits:\n%s", out)
	}
	results := at(t, doc, "results").([]any)
	sum := 0.0
	for _, ts := range results[0].(map[string]any)["summary"].(map[string]any)["tenants"].([]any) {
		sum += ts.(map[string]any)["quota_gpus"].(float64)
	}
	if math.Abs(sum-128) > 1e-9 {
		t.Errorf("the tenants' quotas add up to %v GPUs, want the fleet's 128", sum)
	}
}

// Quotas the user gives are the replay's; the other tenants share what is
// left by their work; a tenant the workload lacks, or quotas above the
// fleet, are refused with the reason.
func TestSimTakesGivenQuotas(t *testing.T) {
	_, doc := simDocOf(t, "--nodes", "16", "--days", "2", "--policies", "corral", "--quota", "research=64", "--quota", "interns=2")
	quotas := map[string]float64{}
	for _, ts := range at(t, doc, "results").([]any)[0].(map[string]any)["summary"].(map[string]any)["tenants"].([]any) {
		m := ts.(map[string]any)
		quotas[m["tenant"].(string)] = m["quota_gpus"].(float64)
	}
	if quotas["research"] != 64 || quotas["interns"] != 2 || math.Abs(quotas["platform"]+quotas["product"]-62) > 1e-9 {
		t.Errorf("quotas %v: want research 64, interns 2, the other two 62 between them", quotas)
	}
	for args, want := range map[string]string{
		"bogus=3":      `quota for tenant "bogus": the workload has no such tenant`,
		"research=200": "add up to more than the fleet's 128 GPUs",
		"research=-1":  "GPUS must be a number of GPUs, 0 or more",
		"research":     "want TENANT=GPUS",
	} {
		_, errOut, code := runCLI(t, "sim", "--nodes", "16", "--days", "2", "--policies", "corral", "--quota", args)
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("--quota %s: exit %d, %q; want it refused (exit 2) saying %q", args, code, errOut, want)
		}
	}
}
