package plan

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-sched/corral/internal/gpu"
)

// Series is the hourly GPU demand of one model: GPUs[h] GPUs wanted in
// hour h (fractions allowed: shared and MIG-packed work).
type Series struct {
	Model string
	GPUs  []float64
}

// Demand is the demand of every model over the same hours, sorted by model.
type Demand struct {
	Hours  int
	Series []Series
}

// Model returns the series of a model, or nil.
func (d *Demand) Model(name string) *Series {
	for i := range d.Series {
		if d.Series[i].Model == name {
			return &d.Series[i]
		}
	}
	return nil
}

// maxHour bounds the hour column: ten years of hours.
const maxHour = 10 * 366 * 24

// MaxGPUs bounds the gpus column: GPUs of one model in one hour. It is far
// above any fleet, and keeps the cost curve (one point per level up to
// the peak) small enough to compute.
const MaxGPUs = 1_000_000

// columns are the demand file's columns, in their default order.
var columns = []string{"hour", "gpu_model", "gpus"}

// ReadDemand reads "hour,gpu_model,gpus" rows. A header line is optional;
// when there is one, columns are read by its names, in any order. Hours
// are integers from 0; hours with no row for a model are zero demand for
// it; the demand spans hour 0 to the last hour of any model. Errors name
// source and line.
func ReadDemand(r io.Reader, source string) (*Demand, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.Comment = '#'
	byModel := map[string]map[int]float64{}
	firstLine := map[string]int{} // "model/hour" -> line
	order := []int{0, 1, 2}       // field of each of columns
	hours := 0
	for first := true; ; first = false {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		line, _ := cr.FieldPos(0)
		if first && isHeader(rec) {
			if order, err = headerOrder(rec); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", source, line, err)
			}
			continue
		}
		h, model, n, err := parseRow(rec, order)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", source, line, err)
		}
		key := model + "/" + strconv.Itoa(h)
		if prev, dup := firstLine[key]; dup {
			return nil, fmt.Errorf("%s:%d: hour %d of %s given twice (first at line %d)", source, line, h, model, prev)
		}
		firstLine[key] = line
		if byModel[model] == nil {
			byModel[model] = map[int]float64{}
		}
		byModel[model][h] = n
		hours = max(hours, h+1)
	}
	if len(byModel) == 0 {
		return nil, fmt.Errorf("%s: no demand rows (want hour,gpu_model,gpus)", source)
	}
	return assemble(byModel, hours), nil
}

// isHeader tells a header line: one that names the hour column.
func isHeader(rec []string) bool {
	return slices.ContainsFunc(rec, func(f string) bool { return strings.EqualFold(strings.TrimSpace(f), "hour") })
}

// headerOrder finds each of columns in a header line.
func headerOrder(rec []string) ([]int, error) {
	if len(rec) != len(columns) {
		return nil, fmt.Errorf("header %q: want the 3 columns hour, gpu_model, gpus in any order", strings.Join(rec, ","))
	}
	order := make([]int, len(columns))
	for i, name := range columns {
		order[i] = slices.IndexFunc(rec, func(f string) bool { return strings.EqualFold(strings.TrimSpace(f), name) })
		if order[i] < 0 {
			return nil, fmt.Errorf("header %q: no column %q (want hour, gpu_model, gpus in any order)", strings.Join(rec, ","), name)
		}
	}
	return order, nil
}

// parseRow checks one row whose columns hour, gpu_model and gpus are the
// fields order names.
func parseRow(rec []string, order []int) (hour int, model string, gpus float64, err error) {
	if len(rec) != len(columns) {
		return 0, "", 0, fmt.Errorf("want 3 fields hour,gpu_model,gpus, got %d", len(rec))
	}
	hourField, modelField, gpusField := rec[order[0]], rec[order[1]], rec[order[2]]
	hour, err = strconv.Atoi(strings.TrimSpace(hourField))
	if err != nil || hour < 0 || hour >= maxHour {
		return 0, "", 0, fmt.Errorf("hour %q: want an integer from 0 to %d", hourField, maxHour-1)
	}
	m, err := gpu.Lookup(strings.TrimSpace(modelField))
	if err != nil {
		return 0, "", 0, err
	}
	gpus, err = strconv.ParseFloat(strings.TrimSpace(gpusField), 64)
	if err != nil || !validGPUs(gpus) {
		return 0, "", 0, fmt.Errorf("gpus %q: want a number from 0 to %d (GPUs of one model in one hour)", gpusField, MaxGPUs)
	}
	return hour, m.Name, gpus, nil
}

// validGPUs tells whether v is a demand the planner takes: 0 to MaxGPUs.
func validGPUs(v float64) bool { return v >= 0 && v <= MaxGPUs }

// check reports the first hour of d outside 0 to MaxGPUs, NaN included.
func (d *Demand) check() error {
	for _, s := range d.Series {
		for h, v := range s.GPUs {
			if !validGPUs(v) {
				return fmt.Errorf("demand for %s in hour %d is %g GPUs: want 0 to %d", s.Model, h, v, MaxGPUs)
			}
		}
	}
	return nil
}

func assemble(byModel map[string]map[int]float64, hours int) *Demand {
	d := &Demand{Hours: hours}
	for model, rows := range byModel {
		s := Series{Model: model, GPUs: make([]float64, hours)}
		for h, n := range rows {
			s.GPUs[h] = n
		}
		d.Series = append(d.Series, s)
	}
	slices.SortFunc(d.Series, func(a, b Series) int { return strings.Compare(a.Model, b.Model) })
	return d
}
