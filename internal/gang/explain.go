package gang

import (
	"fmt"
	"sort"
	"strings"

	"github.com/corral-sched/corral/internal/job"
)

// explain says why need tasks of r do not fit under pl's constraints: the
// room the fleet has, why nodes hold nothing, and per level the largest
// free domain.
func (s *State) explain(pl *plan, r *request, need int) *Unfit {
	if s.quiet {
		return &Unfit{Job: pl.job.Name}
	}
	reasons := map[Reason]int{}
	lim := pl.lim
	lim.need = unlimited
	s.fill(r, s.root(), lim, reasons)
	u := &Unfit{Job: pl.job.Name}
	total := s.scratch.capV[0]
	if total < need {
		msg := fmt.Sprintf("needs %s; the fleet has room for %s now", describe(r, need), describe(r, total))
		if pl.lim.spreadDepth >= 0 {
			msg += fmt.Sprintf(" with at most %d per %s", pl.lim.spreadMax, pl.levels[pl.lim.spreadDepth])
		}
		u.Reasons = append(u.Reasons, msg)
	}
	if d := pl.minDepth; d >= 0 {
		if best := s.bestAt(d); best < need {
			u.Reasons = append(u.Reasons, fmt.Sprintf("needs %s in one %s; the largest free %s has room for %s",
				describe(r, need), pl.levels[d], pl.levels[d], describe(r, best)))
		}
	}
	if total < need {
		u.Reasons = append(u.Reasons, nodeReasons(reasons)...)
	}
	if len(u.Reasons) == 0 {
		u.Reasons = append(u.Reasons, fmt.Sprintf("needs %s; no placement found", describe(r, need)))
	}
	return u
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

// nodeReasons lists rejection reasons, most frequent first.
func nodeReasons(counts map[Reason]int) []string {
	type rc struct {
		r Reason
		n int
	}
	var list []rc
	for r, n := range counts {
		if r != "" {
			list = append(list, rc{r, n})
		}
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].n != list[j].n {
			return list[i].n > list[j].n
		}
		return list[i].r < list[j].r
	})
	out := make([]string, len(list))
	for i, x := range list {
		unit := "nodes"
		if x.n == 1 {
			unit = "node"
		}
		out[i] = fmt.Sprintf("%d %s: %s", x.n, unit, x.r)
	}
	return out
}

func joinReasons(r []string) string { return strings.Join(r, "; ") }
