package gang

import (
	"errors"
	"fmt"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/job"
)

// Placement is the decision for one job: where each task runs.
type Placement struct {
	Job   string
	Tasks []Task
	// Span counts the distinct domains the tasks occupy at each fleet
	// level, outermost first, then the distinct nodes.
	Span []int
	job  *job.Job
}

// Spec is the job placed, as it was asked for; nil for a placement the
// state did not make.
func (p *Placement) Spec() *job.Job { return p.job }

// plan is a job compiled against the fleet.
type plan struct {
	job      *job.Job
	reqs     []*request // one per group, in group order
	minDepth int        // the common domain lies at this depth or deeper; -1: anywhere
	lim      limits
	levels   []string // level names by depth, then "node"
	spread   *job.Constraint
}

// Place decides where job j runs and applies the decision, or returns why
// it cannot run now. All of j's tasks are placed or none.
func (s *State) Place(asked *job.Job) (*Placement, *Unfit) {
	if s.jobs[asked.Name] != nil {
		return nil, &Unfit{Job: asked.Name, Refused: "a job with this name is already placed"}
	}
	j, err := s.Resolve(asked)
	if err != nil {
		return nil, &Unfit{Job: asked.Name, Refused: err.Error()}
	}
	pl, err := s.compile(j)
	if err != nil {
		return nil, &Unfit{Job: j.Name, Refused: err.Error()}
	}
	s.observe(j)
	s.noteImages(j)
	defer func() { s.img.on = false }()
	s.savepoint()
	tasks, unfit := s.placePlan(pl)
	for unfit != nil && pl.spread != nil && !pl.spread.Required && pl.lim.spreadMax < j.Tasks() {
		pl.lim.spreadMax++ // a preferred spread gives way one task per domain at a time
		tasks, unfit = s.placePlan(pl)
	}
	if unfit != nil {
		s.rollback()
		return nil, withShapeReason(unfit, j)
	}
	s.commit()
	s.noteObserved(j.Name)
	delete(s.packer.observed, j.Name)
	p := &Placement{Job: j.Name, Tasks: tasks, Span: s.span(tasks), job: j}
	s.noteJob(j.Name)
	s.jobs[j.Name] = p
	s.countShares(p, 1)
	return p, nil
}

// TryPlace is Place without the explanation: when j does not fit it says
// only false, which saves a pass over the fleet. Simulators use it.
func (s *State) TryPlace(j *job.Job) (*Placement, bool) {
	s.quiet = true
	defer func() { s.quiet = false }()
	p, u := s.Place(j)
	return p, u == nil
}

// Release frees everything job name holds.
func (s *State) Release(name string) error {
	p := s.jobs[name]
	if p == nil {
		return fmt.Errorf("release %s: no such job placed", name)
	}
	s.untakeTasks(p.Tasks)
	s.noteJob(name)
	s.countShares(p, -1)
	delete(s.jobs, name)
	return nil
}

func (s *State) compile(j *job.Job) (*plan, error) {
	j, err := s.Resolve(j)
	if err != nil {
		return nil, err
	}
	if err := j.Validate(); err != nil {
		return nil, err
	}
	pl := &plan{job: j, minDepth: -1, lim: limits{need: j.Tasks(), spreadDepth: -2}}
	pl.levels = append(append([]string{}, s.fleet.Levels...), fleet.NodeLevel)
	for i := range j.Topology {
		c := &j.Topology[i]
		d, err := s.fleet.LevelIndex(c.Level)
		if err != nil {
			return nil, err
		}
		switch {
		case c.Spread && pl.spread != nil:
			return nil, errors.New("at most one spread constraint per job")
		case c.Spread:
			pl.spread = c
			pl.lim.spreadDepth, pl.lim.spreadMax = d, max(c.MaxPerDomain, 1)
		case c.Required:
			pl.minDepth = max(pl.minDepth, d)
		}
	}
	for g, grp := range j.Groups {
		r, err := s.newRequest(g, grp.Task, j.MayBorrowSpares(s.opt.SpareLoan), j.TolerationsOf(g))
		if err != nil {
			return nil, fmt.Errorf("group %q: %w", grp.Name, err)
		}
		pl.reqs = append(pl.reqs, r)
	}
	return pl, nil
}

func (s *State) placePlan(pl *plan) ([]Task, *Unfit) {
	if len(pl.reqs) == 1 {
		return s.placeSingle(pl)
	}
	return s.placeMulti(pl)
}

// placeSingle places a gang of one task shape: as many tasks as fit, up to
// the job's count and no fewer than its minimum, in the best domain.
func (s *State) placeSingle(pl *plan) ([]Task, *Unfit) {
	r, lo, hi := pl.reqs[0], pl.job.MinTasks(), pl.job.Tasks()
	if hi == 1 && pl.lim.spreadDepth < 0 && !r.spares && s.packs(r) {
		if tasks, ok := s.packSingle(r); ok {
			return tasks, nil
		}
		return nil, s.explain(pl, r, lo)
	}
	if hi == 1 && pl.lim.spreadDepth < 0 && !r.spares && !s.img.on { // the index knows no images
		switch n, res := s.fastNode(r); res {
		case fastFound:
			return s.assign(n, r, 1), nil
		case fastNone:
			return nil, s.explain(pl, r, lo)
		}
	}
	need := min(hi, s.room(pl, pl.lim))
	if need < lo {
		return nil, s.explain(pl, r, lo)
	}
	at, _ := s.deepest(s.root(), need, pl.minDepth)
	return s.fillIn(r, at, need), nil
}

// room computes capacities for pl's one task shape under lim and returns
// the most tasks one domain at the required depth holds when that is at
// least the job's minimum, else some number below it; 0 when the index
// already shows there are too few free GPUs. A domain at the required
// depth without free GPUs for the minimum cannot hold the job, nor can
// anything in it, so its nodes are not looked at (limits.gateFree): the
// domain that holds the job, and every node or domain in it, has its
// capacities as a full fill gives them.
func (s *State) room(pl *plan, lim limits) int {
	r, lo := pl.reqs[0], pl.job.MinTasks()
	if s.tooFewFreeGPUs(r, lo) {
		return 0
	}
	lim.need = pl.job.Tasks()
	if d := pl.minDepth; d >= 0 && s.tree.levels > 0 {
		lim.gateDepth, lim.gateFree = min(d, s.tree.levels-1), lo*r.d.GPUs
	}
	s.fill(r, s.root(), lim, nil)
	return s.bestAt(pl.minDepth)
}

func (s *State) root() ref { return ref{-1, 0} }

// bestAt is the most tasks one domain at depth d holds (the whole fleet
// for d < 0).
func (s *State) bestAt(d int) int {
	if d < 0 {
		return s.scratch.capV[0]
	}
	best := 0
	s.eachCandidate(0, d, func(c ref) { best = max(best, s.capOf(c)) })
	return best
}

// fillIn assigns need tasks inside at: in its tightest descendant that
// holds them all, or split over the fewest children.
func (s *State) fillIn(r *request, at ref, need int) []Task {
	if s.isNode(at) {
		return s.assign(at.id, r, need)
	}
	if inner, ok := s.deepest(at, need, at.depth+1); ok {
		return s.fillIn(r, inner, need)
	}
	var tasks []Task
	for _, sh := range s.split(at, need) {
		tasks = append(tasks, s.fillIn(r, sh.at, sh.tasks)...)
	}
	return tasks
}

// span counts distinct domains per level and distinct nodes.
func (s *State) span(tasks []Task) []int {
	out := make([]int, s.tree.levels+1)
	if len(tasks) == 1 { // one task: one domain at every level
		for l := range out {
			out[l] = 1
		}
		return out
	}
	seen := make([]map[int]bool, s.tree.levels+1)
	for l := range seen {
		seen[l] = map[int]bool{}
	}
	for _, t := range tasks {
		for l := 0; l < s.tree.levels; l++ {
			seen[l][s.tree.path[t.Node][l]] = true
		}
		seen[s.tree.levels][t.Node] = true
	}
	for l := range out {
		out[l] = len(seen[l])
	}
	return out
}

// tooFewFreeGPUs reports, from the index alone, that n whole-GPU tasks of r
// cannot fit: the open nodes it may use have fewer free GPUs in all.
func (s *State) tooFewFreeGPUs(r *request, n int) bool {
	if r.kind != job.Whole || r.spares || r.d.WholeNode {
		return false
	}
	return int(s.freeSum(r, 0)) < n*r.d.GPUs
}
