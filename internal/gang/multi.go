package gang

import (
	"fmt"
	"sort"

	"github.com/corral-sched/corral/internal/job"
)

// maxDomainTries bounds how many common domains a gang of several task
// shapes tries before it is reported as not fitting.
const maxDomainTries = 16

// placeMulti places a gang of several task shapes. The group with the most
// GPUs leads: its candidate domains are tried innermost first, tightest
// first, and the other groups must fit in the same domain. A job whose
// minMember is below its task count starts with as many tasks as fit
// (found by bisection), dropping them from the last group first.
func (s *State) placeMulti(pl *plan) ([]Task, *Unfit) {
	if tasks, ok := s.placeCounts(pl, dropFromLast(pl.job, 0)); ok {
		return tasks, nil
	}
	total := pl.job.Tasks()
	lo, hi, found := pl.job.MinTasks(), total-1, -1
	for lo <= hi { // the most tasks that fit, dropping from the last group first
		mid := (lo + hi) / 2
		s.savepoint()
		_, ok := s.placeCounts(pl, dropFromLast(pl.job, total-mid))
		s.rollback()
		if ok {
			found, lo = mid, mid+1
		} else {
			hi = mid - 1
		}
	}
	if found < 0 {
		return nil, s.explainMulti(pl)
	}
	tasks, _ := s.placeCounts(pl, dropFromLast(pl.job, total-found))
	return tasks, nil
}

// dropFromLast returns the group counts of j less drop tasks, taken from
// the last group first.
func dropFromLast(j *job.Job, drop int) []int {
	counts := make([]int, len(j.Groups))
	for g := len(j.Groups) - 1; g >= 0; g-- {
		d := min(drop, j.Groups[g].Count)
		counts[g] = j.Groups[g].Count - d
		drop -= d
	}
	return counts
}

// placeCounts tries to place counts[g] tasks of every group in one common
// domain. On failure nothing is changed.
func (s *State) placeCounts(pl *plan, counts []int) ([]Task, bool) {
	order := s.leadOrder(pl, counts)
	lead := order[0]
	lim := pl.lim
	lim.need = counts[lead]
	s.fill(pl.reqs[lead], s.root(), lim, nil)
	for _, at := range s.commonCandidates(counts[lead], pl.minDepth) {
		s.savepoint()
		if tasks, ok := s.placeGroupsIn(pl, order, counts, at); ok {
			s.commit()
			return tasks, true
		}
		s.rollback()
	}
	return nil, false
}

// leadOrder lists group indices, the one asking for the most GPUs first.
func (s *State) leadOrder(pl *plan, counts []int) []int {
	order := make([]int, len(counts))
	for i := range order {
		order[i] = i
	}
	weight := func(g int) int {
		d := pl.reqs[g].d
		return counts[g] * (d.GPUs*1000 + d.GPUMilli + b2i(d.MIG != "")*150 + d.Shares)
	}
	sort.SliceStable(order, func(a, b int) bool { return weight(order[a]) > weight(order[b]) })
	return order
}

// commonCandidates lists domains that hold the lead group, innermost depth
// first and best first within a depth, at most maxDomainTries of them.
func (s *State) commonCandidates(need, minDepth int) []ref {
	var out []ref
	for d := s.tree.levels; d >= minDepth && d >= -1 && len(out) < maxDomainTries; d-- {
		var level []ref
		if d == -1 {
			level = []ref{s.root()}
		} else {
			level = s.candidates(0, d)
		}
		var fit []ref
		for _, c := range level {
			if s.capOf(c) >= need {
				fit = append(fit, c)
			}
		}
		sort.SliceStable(fit, func(i, j int) bool { return s.less(fit[i], fit[j]) })
		out = append(out, fit[:min(len(fit), maxDomainTries-len(out))]...)
	}
	return out
}

// placeGroupsIn places every group inside domain at, the lead first.
func (s *State) placeGroupsIn(pl *plan, order, counts []int, at ref) ([]Task, bool) {
	var tasks []Task
	for _, g := range order {
		if counts[g] == 0 {
			continue
		}
		lim := pl.lim
		lim.need = counts[g]
		s.fill(pl.reqs[g], at, lim, nil)
		inner, ok := s.deepest(at, counts[g], at.depth)
		if !ok {
			return nil, false
		}
		got := s.fillIn(pl.reqs[g], inner, counts[g])
		if len(got) < counts[g] {
			return nil, false // fewer than asked: never a gang in part
		}
		tasks = append(tasks, got...)
	}
	return tasks, true
}

// explainMulti says why a gang of several shapes did not fit.
func (s *State) explainMulti(pl *plan) *Unfit {
	if s.quiet {
		return &Unfit{Job: pl.job.Name}
	}
	u := &Unfit{Job: pl.job.Name}
	for g, r := range pl.reqs {
		if count := pl.job.Groups[g].Count; !s.groupFits(pl, r, count) {
			one := s.explainGroup(pl, r, count)
			one.Group = pl.job.Groups[g].Name
			u.Groups = append(u.Groups, one)
		}
	}
	if len(u.Groups) == 0 {
		where := "the fleet"
		if pl.minDepth >= 0 {
			where = "one " + pl.levels[pl.minDepth]
		}
		u.Apart = fmt.Sprintf("each group fits alone, but no domain tried holds all %d groups together in %s (tried up to %d domains)", len(pl.reqs), where, maxDomainTries)
	}
	return u
}

func (s *State) groupFits(pl *plan, r *request, count int) bool {
	lim := pl.lim
	lim.need = count
	s.fill(r, s.root(), lim, nil)
	return s.bestAt(pl.minDepth) >= count
}
