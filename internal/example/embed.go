package example

import (
	"bytes"
	_ "embed"
	"fmt"

	"github.com/corral-sched/corral/internal/openb"
	"github.com/corral-sched/corral/internal/placement"
)

var (
	//go:embed data/example_nodes.csv
	nodesCSV []byte
	//go:embed data/example_pods.csv
	podsCSV []byte
)

// Load reads the shipped example cluster and workload.
func Load() ([]placement.Node, []placement.Pod, error) {
	nodes, err := openb.ReadNodes(bytes.NewReader(nodesCSV), "example_nodes.csv")
	if err != nil {
		return nil, nil, fmt.Errorf("load example: %w", err)
	}
	pods, err := openb.ReadPods(bytes.NewReader(podsCSV), "example_pods.csv")
	if err != nil {
		return nil, nil, fmt.Errorf("load example: %w", err)
	}
	return nodes, pods, nil
}
