package example

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite data/ from the generator")

func TestShippedDataMatchesGenerator(t *testing.T) {
	files := map[string][]byte{
		"example_nodes.csv": NodesCSV(Nodes()),
		"example_pods.csv":  PodsCSV(Pods()),
	}
	for name, want := range files {
		path := filepath.Join("data", name)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the generator; run go test ./internal/example -update", path)
		}
	}
}

func TestLoad(t *testing.T) {
	nodes, pods, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 120 || len(pods) != 750 {
		t.Fatalf("got %d nodes and %d pods, want 120 and 750", len(nodes), len(pods))
	}
	gpus, constrained := 0, 0
	for _, n := range nodes {
		gpus += n.GPUs
	}
	for _, p := range pods {
		if len(p.Models) > 0 {
			constrained++
		}
	}
	if gpus != 585 {
		t.Errorf("cluster has %d GPUs, want 585", gpus)
	}
	if constrained == 0 {
		t.Error("no pod carries a gpu_spec; the example should exercise model constraints")
	}
}
