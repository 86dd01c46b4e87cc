package main

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
)

// writeHourlyDemand turns accounting records into the planner's input:
// for every hour from the first start to the last end, the GPUs held on
// average in that hour per GPU model (a MIG slice or a share counts its
// fraction). Hour 0 is the hour of the first start, truncated to the
// hour.
func writeHourlyDemand(w io.Writer, records []api.Record) error {
	held := hourlyHeld(records)
	models := make([]string, 0, len(held))
	hours := 0
	for m, hs := range held {
		models = append(models, m)
		hours = max(hours, len(hs))
	}
	sort.Strings(models)
	b := bufio.NewWriter(w)
	fmt.Fprintln(b, "hour,gpu_model,gpus")
	for h := 0; h < hours; h++ {
		for _, m := range models {
			v := 0.0
			if h < len(held[m]) {
				v = held[m][h]
			}
			fmt.Fprintf(b, "%d,%s,%.4f\n", h, m, v)
		}
	}
	return b.Flush()
}

// hourlyHeld spreads every record's GPUs over the hours it overlaps.
func hourlyHeld(records []api.Record) map[string][]float64 {
	held := map[string][]float64{}
	if len(records) == 0 {
		return held
	}
	origin := records[0].Start
	for _, r := range records {
		if r.Start.Before(origin) {
			origin = r.Start
		}
	}
	origin = origin.Truncate(time.Hour)
	for _, r := range records {
		model := r.GPUModel
		if model == "" {
			model = "unknown"
		}
		for t := r.Start; t.Before(r.End); {
			h := int(t.Sub(origin) / time.Hour)
			next := origin.Add(time.Duration(h+1) * time.Hour)
			end := next
			if r.End.Before(end) {
				end = r.End
			}
			for len(held[model]) <= h {
				held[model] = append(held[model], 0)
			}
			held[model][h] += r.GPUs * end.Sub(t).Hours()
			t = end
		}
	}
	return held
}
