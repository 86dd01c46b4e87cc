package main

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-sched/corral/internal/sched"
)

// budgetFlag is a repeatable NAME=GPUH/PERIOD or NAME=$USD/PERIOD flag:
// NAME (a tenant or a queue) may use GPUH GPU-hours, or USD dollars at
// the GPUs' prices, per PERIOD, a duration such as 720h or "month" (the
// calendar month, UTC).
type budgetFlag map[string]sched.Budget

const budgetFlagHelp = "NAME=GPUH/PERIOD or NAME=$USD/PERIOD: the tenant or queue NAME may start work only while its GPU-hours (or their cost in dollars, at the GPUs' prices) in the period stay within the budget; PERIOD is a duration (720h) or month (calendar month, UTC); repeatable"

func (b budgetFlag) String() string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(b)) {
		parts = append(parts, name+"="+b[name].String())
	}
	return strings.Join(parts, ",")
}

func (b budgetFlag) Set(v string) error {
	return setNamed(b, v, "budget", "NAME=GPUH/PERIOD or NAME=$USD/PERIOD, e.g. research=1000/720h or research=$20000/month", sched.ParseBudget)
}

// setNamed sets m[NAME] from v, NAME=VALUE, VALUE read by parse; what
// names the flag's value in errors, want its form. A name given twice is
// refused.
func setNamed[V any](m map[string]V, v, what, want string, parse func(string) (V, error)) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("%s %q: want %s", what, v, want)
	}
	if _, dup := m[name]; dup {
		return fmt.Errorf("%s %q: %s has a %s already", what, v, name, what)
	}
	parsed, err := parse(value)
	if err != nil {
		return err
	}
	m[name] = parsed
	return nil
}

// quotaFlag is corral sim's --quota: tenants' nominal GPU quotas.
type quotaFlag map[string]float64

func (q quotaFlag) String() string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(q)) {
		parts = append(parts, fmt.Sprintf("%s=%g", name, q[name]))
	}
	return strings.Join(parts, ",")
}

func (q quotaFlag) Set(v string) error {
	return setNamed(q, v, "quota", "TENANT=GPUS, e.g. research=64", func(gpus string) (float64, error) {
		n, err := strconv.ParseFloat(gpus, 64)
		if err != nil || n < 0 || math.IsInf(n, 0) || math.IsNaN(n) {
			return 0, fmt.Errorf("quota %q: GPUS must be a number of GPUs, 0 or more", v)
		}
		return n, nil
	})
}
