package discover

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/corral-sched/corral/internal/gpu"
)

// maxDeclared bounds the GPUs one declaration may make.
const maxDeclared = 1024

// countModel is one part of a declaration: "8xH100-80GB", or a bare
// model name for one GPU.
var countModel = regexp.MustCompile(`^(\d+)\s*[xX*]\s*(\S.*)$`)

// ParseDeclared reads fake GPUs declared as comma-separated COUNTxMODEL
// parts: "8xH100-80GB" or "4xA100-80GB,2xL4". MODEL is a catalog name or
// alias of internal/gpu ("H100" is "H100-80GB"); a part without "COUNTx"
// is one GPU. The devices are numbered 0..n-1 in the order declared and
// have UUIDs "fake-GPU-<index>". Errors name the part that is wrong.
func ParseDeclared(s string) ([]Device, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("discover: no GPUs declared (want COUNTxMODEL[,COUNTxMODEL...], e.g. 8xH100-80GB)")
	}
	var devices []Device
	for _, part := range strings.Split(s, ",") {
		count, model, err := parsePart(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("discover: declared GPUs %q: part %q: %w", s, part, err)
		}
		if len(devices)+count > maxDeclared {
			return nil, fmt.Errorf("discover: declared GPUs %q: more than %d GPUs", s, maxDeclared)
		}
		for range count {
			i := len(devices)
			devices = append(devices, Device{
				Index:     i,
				UUID:      "fake-GPU-" + strconv.Itoa(i),
				Product:   model.Name,
				Model:     model.Name,
				MemoryMiB: model.MemoryMiB,
				Fake:      true,
			})
		}
	}
	return devices, nil
}

func parsePart(part string) (int, *gpu.Model, error) {
	if part == "" {
		return 0, nil, fmt.Errorf("empty (want COUNTxMODEL, e.g. 8xH100-80GB)")
	}
	count, name := 1, part
	if m := countModel.FindStringSubmatch(part); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil || n < 1 {
			return 0, nil, fmt.Errorf("count %q is not a positive number", m[1])
		}
		count, name = n, strings.TrimSpace(m[2])
	} else if part[0] >= '0' && part[0] <= '9' {
		return 0, nil, fmt.Errorf("want COUNTxMODEL, e.g. 8xH100-80GB")
	}
	model, err := gpu.Lookup(name)
	if err != nil {
		return 0, nil, err
	}
	return count, model, nil
}
