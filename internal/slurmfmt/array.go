package slurmfmt

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ArrayForms lists the job arrays ParseArray takes.
const ArrayForms = "indices such as 0-99, 1,3,5-7 or 0-15:4, with an optional %N throttle (0-99%10)"

// Limits on a job array: at most MaxArrayTasks tasks by default, as
// Slurm's default MaxArraySize (1001) sets them, which an admin may raise
// up to CeilingArrayTasks (ParseArrayUpTo); indices 0..MaxArrayIndex.
const (
	MaxArrayTasks     = 1001
	CeilingArrayTasks = 100_000
	MaxArrayIndex     = 4_000_000
)

// Array is a job array: its task indices in increasing order, and the
// most of its tasks that may run at once (0: no limit).
type Array struct {
	Indices []int
	Limit   int
}

// ParseArray reads sbatch's --array value: a comma-separated list of
// indices N, ranges N-M and stepped ranges N-M:S, then an optional %N,
// the most tasks that run at once. Indices repeated count once.
func ParseArray(s string) (Array, error) { return ParseArrayUpTo(s, MaxArrayTasks) }

// ParseArrayUpTo is ParseArray with at most maxTasks tasks (at most
// CeilingArrayTasks).
func ParseArrayUpTo(s string, maxTasks int) (Array, error) {
	maxTasks = min(maxTasks, CeilingArrayTasks)
	var a Array
	list, limit, throttled := strings.Cut(strings.TrimSpace(s), "%")
	if throttled {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 {
			return a, fmt.Errorf("throttle %%%s: want a number of tasks, 1 or more; %s", limit, ArrayForms)
		}
		a.Limit = n
	}
	if list == "" {
		return a, errors.New("no indices; want " + ArrayForms)
	}
	for _, item := range strings.Split(list, ",") {
		idx, err := arrayItem(item, len(a.Indices), maxTasks)
		if err != nil {
			return Array{}, err
		}
		a.Indices = append(a.Indices, idx...)
	}
	slices.Sort(a.Indices)
	a.Indices = slices.Compact(a.Indices)
	return a, nil
}

// arrayItem expands one item of an array list; have is how many indices
// came before it, so that a huge range is refused before it is made.
func arrayItem(item string, have, maxTasks int) ([]int, error) {
	span, stepText, stepped := strings.Cut(item, ":")
	lo, hi, isRange := strings.Cut(span, "-")
	if !isRange {
		hi = lo
	}
	from, err := arrayIndex(lo)
	if err != nil {
		return nil, err
	}
	to, err := arrayIndex(hi)
	if err != nil {
		return nil, err
	}
	step := 1
	if stepped {
		if !isRange {
			return nil, fmt.Errorf("%q: a step needs a range (0-15:4)", item)
		}
		if step, err = strconv.Atoi(stepText); err != nil || step < 1 {
			return nil, fmt.Errorf("%q: step %q: want a number, 1 or more", item, stepText)
		}
	}
	if to < from {
		return nil, fmt.Errorf("%q: the range ends before it starts", item)
	}
	if n := (to-from)/step + 1; have+n > maxTasks {
		return nil, fmt.Errorf("more than %d tasks; split the array", maxTasks)
	}
	var out []int
	for i := from; i <= to; i += step {
		out = append(out, i)
	}
	return out, nil
}

func arrayIndex(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > MaxArrayIndex || strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("index %q: want a number 0..%d; %s", s, MaxArrayIndex, ArrayForms)
	}
	return n, nil
}

// Step is the step between the array's indices when they are evenly
// spaced (SLURM_ARRAY_TASK_STEP), else 1.
func (a Array) Step() int {
	if len(a.Indices) < 2 {
		return 1
	}
	step := a.Indices[1] - a.Indices[0]
	for i := 2; i < len(a.Indices); i++ {
		if a.Indices[i]-a.Indices[i-1] != step {
			return 1
		}
	}
	return step
}
