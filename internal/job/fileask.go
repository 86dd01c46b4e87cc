package job

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/corral-sched/corral/internal/quantity"
)

// fileAsk is a job file's byGPUMemory: the total alone ("600G") or a
// mapping with the minimum per GPU and the allowed models. A bad value is
// an error at its line.
type fileAsk struct{ ask *MemoryAsk }

type fileAskFields struct {
	Total     string   `yaml:"total"`
	MinPerGPU string   `yaml:"minPerGPU"`
	Models    []string `yaml:"models"`
}

// UnmarshalYAML reads either form.
func (f *fileAsk) UnmarshalYAML(n *yaml.Node) error {
	fields := fileAskFields{}
	switch n.Kind {
	case yaml.ScalarNode:
		fields.Total = n.Value
	case yaml.MappingNode:
		if err := decodeKnown(n, &fields); err != nil {
			return err
		}
	default:
		return atLine(n, "byGPUMemory: want a quantity such as 600G or a mapping of total, minPerGPU and models")
	}
	a := &MemoryAsk{Models: fields.Models}
	var err error
	if a.TotalMiB, err = quantity.GPUMemory(fields.Total); err != nil {
		return atLine(n, "byGPUMemory: total: %v", err)
	}
	if fields.MinPerGPU != "" {
		if a.MinPerGPUMiB, err = quantity.GPUMemory(fields.MinPerGPU); err != nil {
			return atLine(n, "byGPUMemory: minPerGPU: %v", err)
		}
	}
	f.ask = a
	return nil
}

// decodeKnown decodes a mapping into v, refusing fields v lacks.
func decodeKnown(n *yaml.Node, v *fileAskFields) error {
	known := map[string]bool{"total": true, "minPerGPU": true, "models": true}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; !known[k.Value] {
			return atLine(k, "unknown field %q in byGPUMemory (known: minPerGPU, models, total)", k.Value)
		}
	}
	return n.Decode(v)
}

// atLine is an error yaml reports at n's line, as its own errors are.
func atLine(n *yaml.Node, format string, args ...any) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: "+format, append([]any{n.Line}, args...)...)}}
}
