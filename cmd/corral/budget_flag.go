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

// budgetFlag is a repeatable NAME=GPUH/PERIOD flag: NAME (a tenant or a
// queue) may use GPUH GPU-hours per PERIOD, a duration such as 720h or
// "month" (the calendar month, UTC).
type budgetFlag map[string]sched.Budget

const budgetFlagHelp = "NAME=GPUH/PERIOD: the tenant or queue NAME may start work only while its GPU-hours in the period stay within GPUH; PERIOD is a duration (720h) or month (calendar month, UTC); repeatable"

func (b budgetFlag) String() string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(b)) {
		parts = append(parts, name+"="+b[name].String())
	}
	return strings.Join(parts, ",")
}

func (b budgetFlag) Set(v string) error {
	name, spec, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("budget %q: want NAME=GPUH/PERIOD, e.g. research=1000/720h", v)
	}
	if _, dup := b[name]; dup {
		return fmt.Errorf("budget %q: %s has a budget already", v, name)
	}
	bud, err := sched.ParseBudget(spec)
	if err != nil {
		return err
	}
	b[name] = bud
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
	name, gpus, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("quota %q: want TENANT=GPUS, e.g. research=64", v)
	}
	if _, dup := q[name]; dup {
		return fmt.Errorf("quota %q: %s has a quota already", v, name)
	}
	n, err := strconv.ParseFloat(gpus, 64)
	if err != nil || n < 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return fmt.Errorf("quota %q: GPUS must be a number of GPUs, 0 or more", v)
	}
	q[name] = n
	return nil
}
