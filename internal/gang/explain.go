package gang

import (
	"fmt"

	"github.com/corral-sched/corral/internal/job"
)

// explain says why need tasks of r do not fit under pl's constraints: the
// room the fleet has, why nodes hold nothing, and per level the largest
// free domain.
func (s *State) explain(pl *plan, r *request, need int) *Unfit {
	if s.quiet {
		return &Unfit{Job: pl.job.Name}
	}
	return &Unfit{Job: pl.job.Name, Groups: []GroupUnfit{s.explainGroup(pl, r, need)}}
}

// explainGroup says why need tasks of r do not fit.
func (s *State) explainGroup(pl *plan, r *request, need int) GroupUnfit {
	reasons := map[filter]int{}
	lim := pl.lim
	lim.need = unlimited
	s.fill(r, s.root(), lim, reasons)
	g := GroupUnfit{Evaluated: len(s.nodes)}
	total := s.scratch.capV[0]
	if total < need {
		msg := fmt.Sprintf("needs %s; the fleet has room for %s now", describe(r, need), describe(r, total))
		if pl.lim.spreadDepth >= 0 {
			msg += fmt.Sprintf(" with at most %d per %s", pl.lim.spreadMax, pl.levels[pl.lim.spreadDepth])
		}
		g.Notes = append(g.Notes, msg)
	}
	if d := pl.minDepth; d >= 0 {
		if best := s.bestAt(d); best < need {
			g.Notes = append(g.Notes, fmt.Sprintf("needs %s in one %s; the largest free %s has room for %s",
				describe(r, need), pl.levels[d], pl.levels[d], describe(r, best)))
		}
	}
	if total < need {
		g.Filtered = sortedCounts(reasons)
	}
	if len(g.Notes) == 0 && len(g.Filtered) == 0 {
		g.Notes = append(g.Notes, fmt.Sprintf("needs %s; no placement found", describe(r, need)))
	}
	return g
}

// describe names n tasks of r in the units users think in.
func describe(r *request, n int) string {
	switch r.kind {
	case job.Whole:
		if r.d.GPUs == 1 {
			return plural(n, "GPU")
		}
		return fmt.Sprintf("%s (%s of %d)", plural(n*r.d.GPUs, "GPU"), plural(n, "task"), r.d.GPUs)
	case job.MIG:
		return plural(n, "MIG "+r.d.MIG+" slice")
	case job.Shared:
		return plural(n, "GPU share")
	}
	return plural(n, "CPU task")
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
