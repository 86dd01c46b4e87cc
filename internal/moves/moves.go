package moves

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/cost"
	"github.com/corral-sched/corral/internal/cost/commit"
	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/sim"
	"github.com/corral-sched/corral/internal/workload"
)

// Options are the inputs of Run. Zero fields take the defaults noted.
type Options struct {
	Workload workload.Workload // arrivals with their classes (training, fine-tuning, inference, notebook)
	Label    string            // what the workload is, for the report
	Nodes    int               // nodes (8 GPUs) the workload's load is sized for; required
	// Headroom is how many times Nodes each pool may scale to (default 4):
	// capacity bought by the hour is not a fixed fleet, and a pool sized
	// to the load would hold its largest gangs back.
	Headroom int
	GPUModel string         // a model of internal/gpu; default H100-80GB
	Catalog  *price.Catalog // required
	Family   string         // the offer for GPUModel, a family or instance ("": the catalog's first)
	Provider string         // the offer's provider ("": any)
	// Terms are the commitments the floor move is priced with, one row
	// each, each billed as the catalog's kind of it says: a discount
	// applied to the usage, or capacity nodes to fill. Default: a 1-year
	// commitment (a discount) and a block (capacity).
	Terms  []price.Capacity
	Policy string // default "corral"
	Seed   uint64 // seeds spot interruptions
	// SpotOutage is the mean time the capacity of an interrupted spot node
	// stays missing (default 6h: an assumption, no provider publishes it).
	SpotOutage     time.Duration
	ProvisionDelay time.Duration // default 5 min
	ScaleDownAfter time.Duration // default 30 min
	Now            time.Time     // the day price ages are counted to
	Progress       func(move string)

	hasMIG  bool // GPUModel can be partitioned into MIG slices
	hasSpot bool // the offer has a spot price
}

func (o *Options) defaults() error {
	if o.Nodes < 1 || o.Catalog == nil || len(o.Workload.Arrivals) == 0 {
		return errors.New("moves: want at least one node per pool, a catalog and a workload")
	}
	if o.Headroom == 0 {
		o.Headroom = 4
	}
	if o.GPUModel == "" {
		o.GPUModel = fleet.DefaultGPUModel
	}
	m, err := gpu.Lookup(o.GPUModel)
	if err != nil {
		return fmt.Errorf("moves: %w", err)
	}
	o.GPUModel, o.hasMIG = m.Name, m.MIG
	if len(o.Terms) == 0 {
		o.Terms = []price.Capacity{price.Reserved1y, price.ReservedBlock}
	}
	for _, t := range o.Terms {
		if !t.Committed() {
			return fmt.Errorf("moves: floor term %q: want a commitment (%s, %s or %s)", t, price.Reserved1y, price.Reserved3y, price.ReservedBlock)
		}
	}
	if o.Policy == "" {
		o.Policy = "corral"
	}
	if o.SpotOutage == 0 {
		o.SpotOutage = 6 * time.Hour
	}
	if o.ProvisionDelay == 0 {
		o.ProvisionDelay = 5 * time.Minute
	}
	if o.ScaleDownAfter == 0 {
		o.ScaleDownAfter = 30 * time.Minute
	}
	if o.SpotOutage < 0 || o.ProvisionDelay < 0 || o.ScaleDownAfter < 0 || o.Headroom < 1 {
		return errors.New("moves: durations must not be negative")
	}
	return nil
}

// The moves, in the default order of the story.
var order = []struct{ name, what string }{
	{"mig", "MIG slices for inference smaller than a GPU"},
	{"timeslice", fmt.Sprintf("notebooks on time-sliced GPUs (%d shares) in a pool of their own", Slices)},
	{"split", "training and fine-tuning in one pool, inference and notebooks in another"},
	{"spot", "training and fine-tuning on a spot pool of their own, interrupted at the catalog's band"},
	{"floor", "the planner's commitment for the on-demand usage"},
}

// Run replays the workload once for the baseline, once per move alone and
// once with all moves together, and prices every replay.
func Run(o Options) (*Report, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	offer, err := Offer(o.Catalog, o.Provider, o.GPUModel, o.Family)
	if err != nil {
		return nil, err
	}
	o.Family = offer.Instance // every replay is billed on this offer, whatever the catalog's order
	_, spotErr := offer.PerGPUHour(price.Spot)
	o.hasSpot = spotErr == nil
	rep := &Report{Input: o.Label, Policy: o.Policy, Nodes: o.Nodes * o.Headroom, GPUModel: o.GPUModel, Offer: offer.Name(),
		Provider: offer.Provider, Terms: o.Terms, SpotOutageH: o.SpotOutage.Hours()}
	if o.hasSpot {
		rep.spotRate(offer)
	}
	r := &runner{o: o, rep: rep, offer: offer}
	base, err := r.replay("baseline", "one on-demand pool, whole GPUs for every task", setup{})
	if err != nil {
		return nil, err
	}
	rep.Baseline = base
	for _, m := range order {
		if m.name == "mig" && !o.hasMIG {
			rep.Skipped = append(rep.Skipped, Skipped{Move: "mig", Why: o.GPUModel + " has no MIG: its GPUs are not partitioned"})
			continue
		}
		if m.name == "spot" && !o.hasSpot {
			rep.Skipped = append(rep.Skipped, Skipped{Move: "spot", Why: fmt.Sprintf("no spot price known for %s; give one with --prices", offer.Name())})
			continue
		}
		if m.name == "floor" {
			if err := r.floors(base); err != nil {
				return nil, err
			}
			continue
		}
		s := setup{mig: m.name == "mig", timeslice: m.name == "timeslice", split: m.name == "split", spot: m.name == "spot"}
		mv, err := r.replay(m.name, m.what, s)
		if err != nil {
			return nil, err
		}
		rep.Moves = append(rep.Moves, mv)
	}
	all := setup{mig: o.hasMIG, timeslice: true, split: true, spot: o.hasSpot}
	pre, err := r.replay("all but floor", together(all), all)
	if err != nil {
		return nil, err
	}
	rep.AllButFloor = pre
	if rep.All, err = r.allMoves(pre, all); err != nil {
		return nil, err
	}
	rep.finish(o.Now)
	return rep, nil
}

// together says which moves s switches on, and which it leaves out.
func together(s setup) string {
	on, off := []string{}, []string{}
	for _, m := range []struct {
		name string
		on   bool
	}{{"mig", s.mig}, {"timeslice", s.timeslice}, {"split", s.split}, {"spot", s.spot}} {
		if m.on {
			on = append(on, m.name)
		} else {
			off = append(off, m.name)
		}
	}
	what := strings.Join(on[:len(on)-1], ", ") + " and " + on[len(on)-1] + " together"
	if len(off) > 0 {
		what += " (skipped: " + strings.Join(off, ", ") + ")"
	}
	return what
}

// Offer is the catalog's offer the moves of a model are priced on: of
// one provider when provider is not empty, of one family or instance when
// family is not empty, else the catalog's first. It must have an
// on-demand price, the baseline's.
func Offer(cat *price.Catalog, provider, model, family string) (*price.Offer, error) {
	offer, err := cat.FindFrom(provider, model, family)
	if err != nil {
		return nil, fmt.Errorf("moves: %w", err)
	}
	if _, err := offer.PerGPUHour(price.OnDemand); err != nil {
		return nil, fmt.Errorf("moves: the baseline is on-demand: %w", err)
	}
	return offer, nil
}

// floors adds the floor move of every term, planned on the baseline.
func (r *runner) floors(base Move) error {
	for _, term := range r.o.Terms {
		kind, err := r.offer.CommitmentKind(term)
		if err != nil {
			return fmt.Errorf("moves: %w", err)
		}
		what := fmt.Sprintf("the planner's %s commitment (%s): ", term, kind)
		if kind == commit.Discount {
			what += "a discount on the on-demand usage of every pool, up to its amount each hour"
		} else {
			what += "committed nodes under the on-demand pool, paid every hour, to be filled"
		}
		mv, err := r.floorMove(base, term, setup{}, floorName(term), what)
		if err != nil {
			return err
		}
		r.rep.Moves = append(r.rep.Moves, mv)
	}
	return nil
}

// allMoves is every move together: the other four's replay with the floor
// of the first term the catalog prices, planned on that replay.
func (r *runner) allMoves(pre Move, all setup) (Move, error) {
	for _, term := range r.o.Terms {
		if _, err := r.offer.PerGPUHour(term); err != nil {
			continue
		}
		return r.floorMove(pre, term, all, "all", fmt.Sprintf("every move together; the %s floor planned on the replay without it", term))
	}
	m := pre
	m.Name, m.What = "all", "every move together; no floor, as the catalog prices none of its terms"
	return m, nil
}

// runner replays moves.
type runner struct {
	o     Options
	rep   *Report
	offer *price.Offer
}

// replay runs one setup and prices it.
func (r *runner) replay(name, what string, s setup) (Move, error) {
	if r.o.Progress != nil {
		r.o.Progress(name)
	}
	s.model, _ = gpu.Lookup(r.o.GPUModel) // checked by defaults
	f, err := s.buildFleet(r.o.Nodes*r.o.Headroom, r.o.GPUModel)
	if err != nil {
		return Move{}, fmt.Errorf("move %s: %w", name, err)
	}
	w := s.workload(r.o.Workload)
	if s.spot {
		w.Faults = spotFaults(f, r.rep.SpotRatePerNodeHour, r.o.SpotOutage, horizon(w), r.o.Seed)
	}

	p, err := sim.NewPolicy(r.o.Policy)
	if err != nil {
		return Move{}, err
	}
	res, err := sim.RunWith(f, w, p, sim.Options{Autoscale: r.autoscale(f)})
	if err != nil {
		return Move{}, fmt.Errorf("move %s: %w", name, err)
	}
	window := *res
	window.Hours = arrivalWindow(res)
	term := s.floorTerm
	if term == "" {
		term = price.ReservedBlock
	}
	// Reserved nodes here are a capacity floor: a discount floor is billed
	// on the replay it is planned on (discount), never as nodes.
	bill, err := cost.Price(window.Usage(strings.TrimPrefix(string(term), "reserved-"), nil), r.o.Catalog,
		map[string]string{r.o.GPUModel: r.o.Family})
	if err != nil {
		return Move{}, fmt.Errorf("move %s: %w", name, err)
	}
	m := newMove(name, what, res, bill)
	end := time.Duration(res.Summary.HorizonH * float64(time.Hour))
	m.WorkGPUH, m.BacklogGPUH = r.workDone(res, end)
	if m.WorkGPUH > 0 {
		m.USDPerWorkGPUH = m.CostUSD / m.WorkGPUH
	}
	for _, n := range s.floorNodes {
		m.CommittedGPUs += n * fleet.DefaultGPUsPerNode
	}
	m.demand = res
	return m, nil
}

// autoscale scales every pool but the committed ones between 0 and its
// nodes.
func (r *runner) autoscale(f *fleet.Fleet) []sim.Autoscale {
	count := map[string]int{}
	var pools []string
	for _, n := range f.Nodes {
		if count[n.Pool] == 0 && n.CapacityType() != fleet.CapacityReserved {
			pools = append(pools, n.Pool)
		}
		count[n.Pool]++
	}
	var out []sim.Autoscale
	for _, p := range pools {
		most := count[p]
		if p == roleUnused {
			most = 0
		}
		out = append(out, sim.Autoscale{Pool: p, Min: 0, Max: most, ProvisionDelay: r.o.ProvisionDelay, ScaleDownAfter: r.o.ScaleDownAfter})
	}
	return out
}

// horizon is when the last job would end if it started on arrival.
func horizon(w workload.Workload) time.Duration {
	h := w.Horizon
	for _, a := range w.Arrivals {
		h = max(h, a.At+a.Duration)
	}
	return h
}

// arrivalWindow is the hourly samples taken while work arrives. Every move
// is priced over it: the steady state the workload stands for. The drain
// after the last arrival is an artifact of ending the replay (a commitment
// would be paid through it, on-demand nodes would not), and is left out.
func arrivalWindow(res *sim.Result) []sim.Hour {
	for i, h := range res.Hours {
		if float64(h.Hour) >= res.Summary.HorizonH {
			return res.Hours[:i]
		}
	}
	return res.Hours
}

// workDone is the workload's work done in the arrival window, and the work
// arrived in it and not done by its close (the backlog), each job counted
// at what it needs in the workload as given (a 250-milli notebook at a
// quarter of a GPU), whatever a move gave it: the same measure for every
// move. A job that ends after the window counts for the part of its run
// inside it.
func (r *runner) workDone(res *sim.Result, end time.Duration) (done, backlog float64) {
	need := make(map[string]float64, len(r.o.Workload.Arrivals))
	for _, a := range r.o.Workload.Arrivals {
		gpus := 0.0
		for _, g := range a.Job.Groups {
			gpus += float64(g.Count) * workload.GPUFraction(g.Task)
		}
		need[a.Job.Name] = gpus * a.Duration.Hours()
	}
	for _, j := range res.Jobs {
		n := need[j.Name]
		switch {
		case j.Arrive >= end:
		case !j.Started || j.Start >= end || !j.Finished:
			backlog += n
		case j.End <= end:
			done += n
		default:
			part := n * float64(end-j.Start) / float64(j.End-j.Start)
			done, backlog = done+part, backlog+n-part
		}
	}
	return done, backlog
}
