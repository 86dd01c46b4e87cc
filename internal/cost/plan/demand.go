package plan

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
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

// ReadDemand reads "hour,gpu_model,gpus" rows (a header line is optional).
// Hours are integers from 0; hours with no row for a model are zero demand
// for it; the demand spans hour 0 to the last hour of any model. Errors name
// source and line.
func ReadDemand(r io.Reader, source string) (*Demand, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.Comment = '#'
	byModel := map[string]map[int]float64{}
	firstLine := map[string]int{} // "model/hour" -> line
	hours := 0
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) > 0 && strings.EqualFold(strings.TrimSpace(rec[0]), "hour") {
			continue // header
		}
		h, model, n, err := parseRow(rec)
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

// parseRow checks one row.
func parseRow(rec []string) (hour int, model string, gpus float64, err error) {
	if len(rec) != 3 {
		return 0, "", 0, fmt.Errorf("want 3 fields hour,gpu_model,gpus, got %d", len(rec))
	}
	hour, err = strconv.Atoi(strings.TrimSpace(rec[0]))
	if err != nil || hour < 0 || hour >= maxHour {
		return 0, "", 0, fmt.Errorf("hour %q: want an integer from 0 to %d", rec[0], maxHour-1)
	}
	m, err := gpu.Lookup(strings.TrimSpace(rec[1]))
	if err != nil {
		return 0, "", 0, err
	}
	gpus, err = strconv.ParseFloat(strings.TrimSpace(rec[2]), 64)
	if err != nil || gpus < 0 || math.IsInf(gpus, 0) || math.IsNaN(gpus) {
		return 0, "", 0, fmt.Errorf("gpus %q: want a number >= 0", rec[2])
	}
	return hour, m.Name, gpus, nil
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
