package slurmfmt

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// GresForms lists the generic resources ParseGres takes.
const GresForms = "gpu, gpu:N or gpu:TYPE:N, such as gpu:2 or gpu:h100:8"

// Gres is a request for GPUs: Count of them, of Type when it is set (a
// GPU model such as h100, or a MIG profile such as 1g.10gb).
type Gres struct {
	Type  string
	Count int
}

// MaxGres is the largest count ParseGres takes.
const MaxGres = 1 << 16

// ParseGres reads one generic resource as Slurm's --gres takes it: gpu
// (one GPU), gpu:N, gpu:TYPE or gpu:TYPE:N. Other resources (shard, mps)
// and lists of several are refused.
func ParseGres(s string) (Gres, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, ",") {
		return Gres{}, errors.New("a list; corral takes one resource: " + GresForms)
	}
	parts := strings.Split(s, ":")
	if parts[0] != "gpu" {
		return Gres{}, fmt.Errorf("resource %q: corral knows only gpu (%s; --share asks for a fraction of one GPU)", parts[0], GresForms)
	}
	g := Gres{Count: 1}
	if len(parts) > 1 && parts[1] == "" {
		return Gres{}, errors.New("empty type or count; want " + GresForms)
	}
	switch len(parts) {
	case 1:
		return g, nil
	case 2:
		if n, err := strconv.Atoi(parts[1]); err == nil {
			g.Count = n
		} else {
			g.Type = parts[1]
		}
	case 3:
		g.Type = parts[1]
		n, err := strconv.Atoi(parts[2])
		if err != nil {
			return Gres{}, fmt.Errorf("count %q: want a number; %s", parts[2], GresForms)
		}
		g.Count = n
	default:
		return Gres{}, errors.New("want " + GresForms)
	}
	return g, g.check()
}

func (g Gres) check() error {
	if g.Count < 0 || g.Count > MaxGres {
		return fmt.Errorf("count %d: want 0..%d", g.Count, MaxGres)
	}
	if strings.Trim(strings.ToLower(g.Type), "abcdefghijklmnopqrstuvwxyz0123456789._-") != "" {
		return fmt.Errorf("type %q: want letters, digits, '.', '_' and '-'", g.Type)
	}
	return nil
}

// ParseGPUs reads sbatch's --gpus value: N, or TYPE:N.
func ParseGPUs(s string) (Gres, error) {
	typ, count, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		typ, count = "", typ
	}
	n, err := strconv.Atoi(count)
	if err != nil {
		return Gres{}, errors.New("want a number of GPUs (2) or TYPE:N (h100:2)")
	}
	if n < 0 {
		return Gres{}, fmt.Errorf("%d: must not be negative", n)
	}
	g := Gres{Type: typ, Count: n}
	if ok && typ == "" {
		return Gres{}, errors.New("empty type; want a number of GPUs (2) or TYPE:N (h100:2)")
	}
	return g, g.check()
}
