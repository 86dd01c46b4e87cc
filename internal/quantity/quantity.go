package quantity

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var (
	cpuCores = regexp.MustCompile(`^(\d+)(?:\.(\d{1,3}))?$`)
	cpuMilli = regexp.MustCompile(`^(\d+)m$`)
)

// CPU reads cores ("192", "1.5") or millicores ("192000m") as millicores.
func CPU(s string) (int64, error) {
	const want = "want cores such as 192 or 1.5, or millicores such as 192000m"
	if s == "" {
		return 0, errors.New("required; " + want)
	}
	if m := cpuMilli.FindStringSubmatch(s); m != nil {
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q: %w", s, err)
		}
		return n, nil
	}
	m := cpuCores.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q: %s", s, want)
	}
	cores, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || cores > (1<<62)/1000 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	frac, _ := strconv.ParseInt((m[2] + "000")[:3], 10, 64) // at most 3 digits: cannot fail
	return cores*1000 + frac, nil
}

// memoryUnits are the memory units of at least a MiB, in MiB.
var memoryUnits = map[string]int64{"Mi": 1, "Gi": 1 << 10, "Ti": 1 << 20}

var memoryQuantity = regexp.MustCompile(`^(\d+)([KMGT]i)B?$`)

// Memory reads an integer with a binary unit (Ki, Mi, Gi or Ti, optionally
// followed by B) as MiB.
func Memory(s string) (int64, error) {
	const want = "want an integer with a unit Ki, Mi, Gi or Ti, such as 2048Gi"
	if s == "" {
		return 0, errors.New("required; " + want)
	}
	m := memoryQuantity.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q: %s", s, want)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	if m[2] == "Ki" {
		if n%1024 != 0 {
			return 0, fmt.Errorf("%q is not a whole number of MiB", s)
		}
		return n / 1024, nil
	}
	unit := memoryUnits[m[2]]
	if n > (1<<62)/unit {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * unit, nil
}

var gpuMemoryQuantity = regexp.MustCompile(`^(\d+)([GT])B?$`)

// GPUMemory reads GPU memory as Memory does, or as a GB or TB figure the
// way GPU model names give it ("600G", "80GB", "2T"), which, like the GPU
// catalog's names, counts binary units: 80GB is 80Gi.
func GPUMemory(s string) (int64, error) {
	m := gpuMemoryQuantity.FindStringSubmatch(s)
	if m == nil {
		mib, err := Memory(s)
		if err != nil {
			return 0, fmt.Errorf("%w (or G, GB, T, TB as in GPU model names: 600G)", err)
		}
		return mib, nil
	}
	return Memory(m[1] + m[2] + "i")
}

var byteRate = regexp.MustCompile(`^(\d+(?:\.\d+)?)\s*([KMG]i?)?B/s$`)

// rateUnits are the units of ByteRate, in bytes.
var rateUnits = map[string]float64{"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}

// ByteRate reads a transfer rate such as 100MB/s or 1.5GiB/s (decimal
// units K, M, G or binary Ki, Mi, Gi) as bytes a second.
func ByteRate(s string) (float64, error) {
	const want = "want a rate such as 100MB/s, 250MiB/s or 1.5GB/s"
	m := byteRate.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("%q: %s", s, want)
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil || n <= 0 || n > 1e6 {
		return 0, fmt.Errorf("%q: %s, above zero", s, want)
	}
	return n * rateUnits[m[2]], nil
}
