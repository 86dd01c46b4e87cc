package main

import "github.com/corral-sched/corral/internal/report"
import "github.com/corral-sched/corral/internal/packbench"

func computeBounds(specs []packbench.Spec, workers int, p *progress) ([]report.Bound, error) {
	return nil, nil
}

func writeCurves(path string, cells []packbench.Cell, bounds []report.Bound) error { return nil }
