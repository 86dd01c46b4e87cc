package slurmfmt

import (
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// MemForms lists the memory sizes ParseMem takes.
const MemForms = "a memory size in MiB (4096), or with a unit K, M, G or T (512M, 16G; binary, as Slurm's; KiB, GiB, Gi also taken)"

// MaxMemMiB is the largest memory size ParseMem takes: 1 EiB.
const MaxMemMiB = 1 << 40

var memRE = regexp.MustCompile(`^(\d+(?:\.\d+)?)\s*(?:([KMGT])(?:IB|I|B)?)?$`)

// memUnit is each unit in MiB.
var memUnit = map[string]float64{"K": 1.0 / 1024, "": 1, "M": 1, "G": 1024, "T": 1 << 20}

// ParseMem reads a memory size as Slurm's --mem takes it: a number of MiB,
// or a number with a binary unit K, M, G or T (upper or lower case,
// optionally followed by iB, B or i). Fractions are rounded up to a whole
// MiB. Zero is refused: Slurm's --mem=0 asks for all of a node's memory,
// which corral does not offer; leave --mem out to ask for none.
func ParseMem(s string) (int64, error) {
	m := memRE.FindStringSubmatch(strings.ToUpper(strings.TrimSpace(s)))
	if m == nil {
		return 0, errors.New("want " + MemForms)
	}
	num, unit := m[1], m[2]
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, errors.New("want " + MemForms)
	}
	mib := math.Ceil(v * memUnit[unit])
	switch {
	case v == 0:
		return 0, errors.New("0: Slurm's --mem=0 (all of a node's memory) is not offered; leave the size out to ask for none")
	case mib > MaxMemMiB:
		return 0, errors.New("over 1 EiB")
	}
	return int64(mib), nil
}
