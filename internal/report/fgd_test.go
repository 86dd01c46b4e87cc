package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/corral-sched/corral/internal/example"
	"github.com/corral-sched/corral/internal/packbench"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestFGDTableGolden(t *testing.T) {
	nodes, pods, err := example.Load()
	if err != nil {
		t.Fatal(err)
	}
	var specs []packbench.Spec
	for _, p := range []string{"bestfit", "fgd", "corral"} {
		for s := int64(42); s < 45; s++ {
			specs = append(specs, packbench.Spec{Trace: example.Trace, Nodes: nodes, Pods: pods, Policy: p, Seed: s})
		}
	}
	runs, err := packbench.Grid(specs, 2, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	bounds := []Bound{{Trace: example.Trace,
		LP:     packbench.StatOf([]float64{0.5, 0.7}),
		Packed: packbench.StatOf([]float64{3.0, 3.5})}}
	var got bytes.Buffer
	if err := WriteFGDTable(&got, packbench.Aggregate(runs), bounds, true); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "fgd_table.golden")
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
		t.Errorf("table differs from %s (rerun with -update if intended):\n%s", path, got.String())
	}
}

func TestPaperColumn(t *testing.T) {
	cases := map[[2]string]string{
		{"openb_pod_list_default", "fgd"}:    "4.77 [4.62-4.94]",
		{"openb_pod_list_cpu050", "bestfit"}: "6.44",
		{"openb_pod_list_cpu050", "corral"}:  "-",
		{"openb_pod_list_gpushare20", "fgd"}: "-",
	}
	for k, want := range cases {
		if got := paperText(k[0], k[1]); got != want {
			t.Errorf("paperText(%s, %s) = %q, want %q", k[0], k[1], got, want)
		}
	}
}

// The authors' figures are of their cluster: a run of their trace on
// another fleet shows no "paper @100" column to compare with.
func TestPaperColumnOnlyOnTheAuthorsCluster(t *testing.T) {
	cells := []packbench.Cell{{Trace: "openb_pod_list_default", Policy: "fgd", At100: packbench.StatOf([]float64{9.1})}}
	for _, c := range []struct {
		authors bool
		want    bool
	}{{true, true}, {false, false}} {
		var b bytes.Buffer
		if err := WriteFGDTable(&b, cells, nil, c.authors); err != nil {
			t.Fatal(err)
		}
		if got := bytes.Contains(b.Bytes(), []byte("paper @100")); got != c.want {
			t.Errorf("on the authors' cluster %v: paper column %v, want %v:\n%s", c.authors, got, c.want, b.String())
		}
	}
}
