package scalebench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// tiny is a run small enough for -race.
func tiny(seed uint64) Options {
	return Options{Nodes: 100, GPUsPerNode: 8, MIGPct: 20, PinWhole: true, Seed: seed,
		Decisions: 500, GangTrials: 4, Gangs: 20}
}

// counts are the parts of a result that the seed fixes.
func counts(r *Result) [9]int {
	return [9]int{r.DecisionsPlaced, r.DecisionsUnfit, r.Releases, r.WarmupPlaced, r.Gang512Placed,
		r.Gang512FillJobs, r.MixedGangsPlaced, r.MixedGangsReleased, r.MixedGangsGPUsPlaced}
}

func TestRunIsSeeded(t *testing.T) {
	a, err := Run(tiny(1))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(tiny(1))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Run(tiny(7))
	if err != nil {
		t.Fatal(err)
	}
	if counts(a) != counts(b) {
		t.Errorf("same seed, different counts: %v vs %v", counts(a), counts(b))
	}
	if counts(a) == counts(c) {
		t.Errorf("seeds 1 and 7 gave the same counts %v", counts(a))
	}
}

func TestRunCountsAddUp(t *testing.T) {
	var phases []string
	o := tiny(1)
	o.Progress = func(phase string, done, total int) {
		if done == total {
			phases = append(phases, phase)
		}
	}
	r, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"pod decisions", "gang512 trials", "mixed gangs"}; strings.Join(phases, ",") != strings.Join(want, ",") {
		t.Errorf("phases ended %v, want %v", phases, want)
	}
	if r.PodPolicy != "live" || r.Nodes != 100 || r.GPUs != 800 || r.MIGNodes+r.WholeNodes != 100 || r.MIGNodes == 0 {
		t.Errorf("policy %q, nodes %d (%d MIG, %d whole), GPUs %d", r.PodPolicy, r.Nodes, r.MIGNodes, r.WholeNodes, r.GPUs)
	}
	if r.Decisions != 500 || r.DecisionsPlaced+r.DecisionsUnfit != 500 || r.DecisionsPlaced == 0 {
		t.Errorf("decisions %d = placed %d + unfit %d", r.Decisions, r.DecisionsPlaced, r.DecisionsUnfit)
	}
	sum, placed := 0, 0
	for _, k := range r.PodKinds {
		sum, placed = sum+k.Decisions, placed+k.Placed
	}
	if len(r.PodKinds) != 4 || r.PodKinds[0].Policy != "live" || r.PodKinds[1].Policy != "mig" || sum != r.Decisions || placed != r.DecisionsPlaced {
		t.Errorf("pod kinds %+v do not split %d decisions (%d placed)", r.PodKinds, r.Decisions, r.DecisionsPlaced)
	}
	if r.Gang512Trials != 4 || r.Gang512Placed+r.Gang512Unfit != 4 || len(r.Gang512Shapes) != 2 {
		t.Errorf("gang512 %d = placed %d + unfit %d, %d shapes", r.Gang512Trials, r.Gang512Placed, r.Gang512Unfit, len(r.Gang512Shapes))
	}
	if r.MixedGangs != 20 || r.MixedGangsPlaced+r.MixedGangsUnfit != 20 || r.MixedGangsPlaced == 0 {
		t.Errorf("mixed gangs %d = placed %d + unfit %d", r.MixedGangs, r.MixedGangsPlaced, r.MixedGangsUnfit)
	}
	if r.OccupancyMinPct > r.OccupancyMeanPct || r.OccupancyMeanPct > r.OccupancyMaxPct || r.OccupancyMaxPct > 81 {
		t.Errorf("occupancy %v / %v / %v", r.OccupancyMinPct, r.OccupancyMeanPct, r.OccupancyMaxPct)
	}
	if r.P50DecisionMs > r.P99DecisionMs || r.P99DecisionMs > r.MaxDecisionMs {
		t.Errorf("decision quantiles %v %v %v out of order", r.P50DecisionMs, r.P99DecisionMs, r.MaxDecisionMs)
	}
	if r.Thresholds.MaxMixedGangsSeconds != MaxMixedGangsSec*20/1000 {
		t.Errorf("mixed gang threshold %v not pro-rated for 20 gangs", r.Thresholds.MaxMixedGangsSeconds)
	}
}

func TestRunDefaultsDecisions(t *testing.T) {
	o := tiny(1)
	o.Nodes, o.Decisions = 20, 0
	r, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Decisions != 400 {
		t.Errorf("decisions %d, want 20 per node (400)", r.Decisions)
	}
}

func TestCheckNamesTheFlag(t *testing.T) {
	cases := []struct {
		edit func(*Options)
		want string
	}{
		{func(o *Options) { o.Nodes = 0 }, "--nodes 0: want 1 to"},
		{func(o *Options) { o.GPUsPerNode = 65 }, "--gpus-per-node 65"},
		{func(o *Options) { o.MIGPct = -1 }, "--mig-pct -1"},
		{func(o *Options) { o.Decisions = -5 }, "--decisions -5"},
		{func(o *Options) { o.GangTrials = 0 }, "--gang-trials 0"},
		{func(o *Options) { o.Gangs = 0 }, "--gangs 0"},
	}
	for _, c := range cases {
		o := tiny(1)
		c.edit(&o)
		if _, err := Run(o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one mentioning %q", err, c.want)
		}
	}
}

func TestJudgeAtTheTargets(t *testing.T) {
	r := &Result{DecisionsPerSec: MinDecisionsPerSec, P99DecisionMs: MaxP99DecisionMs,
		Gang512P99Ms: MaxGang512P99Ms, MixedGangs: 1000, MixedGangsSeconds: MaxMixedGangsSec}
	r.Judge()
	if !r.Pass.All {
		t.Errorf("a run exactly at the targets fails: %+v", r.Pass)
	}
	r.P99DecisionMs = 0.21
	r.Judge()
	if r.Pass.P99Decision || r.Pass.All || !r.Pass.DecisionsPerSec {
		t.Errorf("p99 0.21 ms: %+v", r.Pass)
	}
	if r.Thresholds.MinDecisionsPerSec != 50_000 || r.Thresholds.MaxP99DecisionMs != 0.2 || r.Thresholds.MaxGang512P99Ms != 5 {
		t.Errorf("thresholds %+v, want the issue's 50,000/s, 0.2 ms, 5 ms", r.Thresholds)
	}
}

func TestWriters(t *testing.T) {
	r, err := Run(tiny(1))
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	if err := WriteTable(&table, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"corral bench scale: 100 nodes", "policy live", ">= 50000", "p99 <= 0.2 ms", "p99 <= 5 ms", "mixed gang p50 / p99"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	var doc bytes.Buffer
	if err := WriteJSON(&doc, r); err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(doc.Bytes(), &fields); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"decisions_per_sec", "p99_decision_ms", "gang512_p99_ms", "mixed_gangs_seconds", "pod_policy", "thresholds", "pass"} {
		if _, ok := fields[key]; !ok {
			t.Errorf("JSON lacks %q", key)
		}
	}
}
