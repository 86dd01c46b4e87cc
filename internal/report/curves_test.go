package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/example"
	"github.com/corral-sched/corral/internal/packbench"
)

// TestFGDCurvesGolden draws the example's curves for two policies and
// three seeds, with their LP bound line, and compares the document byte for
// byte with testdata/fgd_curves.svg, which `corral bench fgd --policies
// fgd,corral --seeds 42-44 --svg` wrote before the bound driver and the
// drawing moved out of cmd/corral.
func TestFGDCurvesGolden(t *testing.T) {
	nodes, pods, err := example.Load()
	if err != nil {
		t.Fatal(err)
	}
	var specs []packbench.Spec
	for _, p := range []string{"fgd", "corral"} {
		for s := int64(42); s < 45; s++ {
			specs = append(specs, packbench.Spec{Trace: example.Trace, Nodes: nodes, Pods: pods, Policy: p, Seed: s})
		}
	}
	runs, err := packbench.Grid(specs, 2, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	bounds, err := packbench.Bounds(specs, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := WriteFGDCurves(&got, packbench.Aggregate(runs), bounds); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{example.Trace, "LP bound at x = 100", "x = 130", "fgd", "corral"} {
		if !strings.Contains(got.String(), want) {
			t.Errorf("curves lack %q", want)
		}
	}
	path := filepath.Join("testdata", "fgd_curves.svg")
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("curves differ from %s (rerun with -update if intended)", path)
	}
}
