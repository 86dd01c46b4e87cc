package openb

import (
	"encoding/csv"
	"errors"
	"fmt"
	"github.com/corral-sched/corral/internal/placement"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The column sets of the openb CSVs.
var (
	nodeColumns     = []string{"sn", "cpu_milli", "memory_mib", "gpu", "model"}
	podColumnsShort = []string{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"}
	podColumnsLong  = append(append([]string{}, podColumnsShort...),
		"gpu_spec", "qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time")
)

// ReadNodesFile reads an openb node list (sn,cpu_milli,memory_mib,gpu,model).
func ReadNodesFile(path string) ([]placement.Node, error) { return readFile(path, "nodes", ReadNodes) }

// readFile opens path and reads what it holds with read; what names it
// in the error when the file cannot be opened.
func readFile[T any](path, what string, read func(io.Reader, string) ([]T, error)) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	defer f.Close()
	return read(f, path)
}

// ReadNodes parses an openb node list; source names the input in errors.
func ReadNodes(r io.Reader, source string) ([]placement.Node, error) {
	var nodes []placement.Node
	seen := map[string]int{}
	err := readCSV(r, source, [][]string{nodeColumns}, func(line int, rec []string) error {
		n := placement.Node{Name: rec[0], Model: strings.TrimSpace(rec[4])}
		var err error
		if n.CPUMilli, err = parseInt(rec[1], "cpu_milli"); err != nil {
			return err
		}
		if n.MemoryMiB, err = parseInt(rec[2], "memory_mib"); err != nil {
			return err
		}
		gpus, err := parseInt(rec[3], "gpu")
		if err != nil {
			return err
		}
		n.GPUs = int(gpus)
		if err := n.Validate(); err != nil {
			return err
		}
		if first, dup := seen[n.Name]; dup {
			return fmt.Errorf("node %s already defined on line %d", n.Name, first)
		}
		seen[n.Name] = line
		nodes = append(nodes, n)
		return nil
	})
	return nodes, err
}

// ReadPodsFile reads an openb pod list in the 11-column or 5-column form.
func ReadPodsFile(path string) ([]placement.Pod, error) { return readFile(path, "pods", ReadPods) }

// ReadPods parses an openb pod list; source names the input in errors.
// gpu_spec, when present, becomes the pod's allowed-model set.
func ReadPods(r io.Reader, source string) ([]placement.Pod, error) {
	var pods []placement.Pod
	seen := map[string]int{}
	err := readCSV(r, source, [][]string{podColumnsLong, podColumnsShort}, func(line int, rec []string) error {
		p := placement.Pod{Name: rec[0]}
		var err error
		if p.CPUMilli, err = parseInt(rec[1], "cpu_milli"); err != nil {
			return err
		}
		if p.MemoryMiB, err = parseInt(rec[2], "memory_mib"); err != nil {
			return err
		}
		num, err := parseInt(rec[3], "num_gpu")
		if err != nil {
			return err
		}
		p.NumGPU = int(num)
		if p.GPUMilli, err = parseInt(rec[4], "gpu_milli"); err != nil {
			return err
		}
		if len(rec) > 5 {
			p.Models = ParseModelSpec(rec[5])
		}
		if err := p.Validate(); err != nil {
			return err
		}
		if first, dup := seen[p.Name]; dup {
			return fmt.Errorf("pod %s already defined on line %d", p.Name, first)
		}
		seen[p.Name] = line
		pods = append(pods, p)
		return nil
	})
	return pods, err
}

// ParseModelSpec splits a gpu_spec ("V100M16|V100M32") into distinct models,
// keeping their first-seen order.
func ParseModelSpec(spec string) []string {
	var models []string
	for _, m := range strings.Split(spec, "|") {
		m = strings.TrimSpace(m)
		if m == "" || contains(models, m) {
			continue
		}
		models = append(models, m)
	}
	return models
}

// TraceName is a pod file's name without directory and .csv suffix.
func TraceName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".csv")
}

// readCSV checks the header against the accepted column sets and calls row
// for every record, wrapping any error with the source and line.
func readCSV(r io.Reader, source string, accepted [][]string, row func(line int, rec []string) error) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: empty file, want header %s", source, strings.Join(accepted[0], ","))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	width := 0
	for _, cols := range accepted {
		if equalFold(header, cols) {
			width = len(cols)
		}
	}
	if width == 0 {
		return fmt.Errorf("%s:1: header %q, want %s", source, strings.Join(header, ","), strings.Join(accepted[0], ","))
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != width {
			return fmt.Errorf("%s:%d: %d fields, want %d", source, line, len(rec), width)
		}
		if err := row(line, rec); err != nil {
			return fmt.Errorf("%s:%d: %w", source, line, err)
		}
	}
}

func parseInt(s, column string) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not an integer", column, s)
	}
	return v, nil
}

func equalFold(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !strings.EqualFold(strings.TrimSpace(a[i]), b[i]) {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
