package twin

import (
	"errors"
	"fmt"
	"slices"
)

// Fleet is the machines of a script: Nodes nodes (1 when 0) of GPUs GPUs
// of Model each, every GPU cut into Slices time-sliced shares when
// Slices > 1, or split into MIG instances when MIG is set. RackSize > 0
// puts the nodes in racks of that many, in name order: a topology level
// "rack" that jobs may ask to be packed in. The last Spares nodes of each
// rack (of the fleet, without racks) are hot spares: kept free, for the
// gangs a failed node strikes to move to.
type Fleet struct {
	GPUs     int
	Nodes    int
	RackSize int
	Spares   int
	Model    string // a catalog name; "" is DefaultModel
	Slices   int
	MIG      bool
}

// Spare reports whether the i-th node is a hot spare.
func (f Fleet) Spare(i int) bool {
	size := f.RackSize
	if size <= 0 {
		size = len(f.NodeNames())
	}
	return f.Spares > 0 && i%size >= size-f.Spares
}

// NodeNames are the fleet's nodes by name: "node" for one machine, else
// n0, n1, ... in rack order.
func (f Fleet) NodeNames() []string {
	if f.Nodes <= 1 {
		return []string{"node"}
	}
	names := make([]string, f.Nodes)
	for i := range names {
		names[i] = fmt.Sprintf("n%d", i)
	}
	return names
}

// Rack is the rack of the i-th node (r0, r1, ...), "" without racks.
func (f Fleet) Rack(i int) string {
	if f.RackSize <= 0 {
		return ""
	}
	return fmt.Sprintf("r%d", i/f.RackSize)
}

// ErrOneMachine is what a face that runs one machine only (corral server)
// returns for a fleet of several nodes; its test skips the script.
var ErrOneMachine = errors.New("this face runs one machine; the script has several nodes")

// ErrNoResize is what a face that resizes no running job returns for an
// elastic job; its test skips the script.
var ErrNoResize = errors.New("this face resizes no running job; the script has an elastic one")

// DefaultModel is the GPU of a fleet that names none.
const DefaultModel = "H100-80GB"

// Tenant is a team: a GPU quota (0: none) and the cohort whose members
// lend each other what their quotas leave unused ("": none).
type Tenant struct {
	Name   string
	Quota  int
	Cohort string
}

// Job is a submitted job as every face takes it: Tasks identical tasks,
// each of GPUs whole GPUs, or a Share of one GPU in thousandths, or one
// MIG instance of profile MIG; charged to Tenant, at Priority. Pack, when
// set, is the topology level ("rack", "node") all its tasks must share.
type Job struct {
	Name     string
	Tenant   string
	GPUs     int
	Share    int
	MIG      string
	Tasks    int
	Priority int
	Pack     string
	// MinTasks, when above 0 and below Tasks, makes the job elastic: it
	// starts with at least that many tasks and runs at any size up to
	// Tasks, as the core grows it and takes what it grew by back.
	MinTasks int
}

// Elastic reports whether the job may run at several sizes.
func (j Job) Elastic() bool { return j.MinTasks > 0 && j.MinTasks < j.Tasks }

// Face is corral as one of its faces runs it: it learns a fleet and
// tenants, takes jobs, is told which jobs finish and when the machine
// leaves and comes back, and when asked to settle decides until nothing
// changes, reporting what it did.
type Face interface {
	Fleet(f Fleet) error
	Tenant(t Tenant) error
	Submit(j Job) error
	Finish(name string) error
	// Down takes a node away (every node when node is ""): a gang the
	// core's rule moves (sched.MovesOff) goes on with its tasks there on
	// a spare or free node next to the rest; its other jobs stop and wait
	// again; nothing is placed on it until Up brings it back.
	Down(node string) error
	Up(node string) error
	// Restart stops the face's process and starts another on what it
	// persisted (the server's store; the API server and a new leader for
	// the Kubernetes face). Its jobs run on; the transcript must not
	// change. A face that keeps nothing past its process does nothing.
	Restart() error
	// Settle returns the jobs started and the jobs preempted since the last
	// call, and the jobs waiting now. A job stopped because the machine
	// left is not preempted: it shows as waiting, and as started again.
	Settle() (started, preempted, waiting []string, err error)
}

// Mover is a face that moves a gang off a failed node instead of
// stopping it (sched.MovesOff): Moved returns the jobs moved since the
// last call. A face that is not a Mover moves nothing.
type Mover interface {
	Moved() []string
}

// Resizer is a face that grows and shrinks elastic jobs: Resized returns
// the jobs that run with more tasks than at the last call, and those
// with fewer, that ran then and were not stopped since. A face that is
// not a Resizer resizes nothing.
type Resizer interface {
	Resized() (grew, shrank []string)
}

// Run plays the script's steps on face and returns the transcript.
func Run(face Face, s *Script) ([]string, error) {
	var out []string
	for _, st := range s.Steps {
		var err error
		switch st.Cmd {
		case "fleet":
			err = face.Fleet(Fleet{GPUs: st.Int("gpus", 8), Nodes: st.Int("nodes", 1), RackSize: st.Int("rack", 0), Spares: st.Int("spares", 0),
				Model: st.Args["model"], Slices: st.Int("slices", 0), MIG: st.Args["mig"] == "true"})
		case "tenant":
			err = face.Tenant(Tenant{Name: st.Name, Quota: st.Int("quota", 0), Cohort: st.Args["cohort"]})
		case "submit":
			err = face.Submit(jobOf(st))
		case "finish":
			err = face.Finish(st.Name)
		case "down":
			err = face.Down(st.Name)
		case "up":
			err = face.Up(st.Name)
		case "restart":
			err = face.Restart()
		case "settle":
			var lines []string
			lines, err = settle(face)
			out = append(out, lines...)
		}
		if err != nil {
			return out, fmt.Errorf("line %d (%s %s): %w", st.Line, st.Cmd, st.Name, err)
		}
	}
	return out, nil
}

// jobOf is a submit step's job: one whole GPU a task unless it asks for a
// share or a MIG instance.
func jobOf(st Step) Job {
	j := Job{Name: st.Name, Tenant: st.Args["tenant"], Share: st.Int("share", 0), MIG: st.Args["mig"],
		Tasks: st.Int("tasks", 1), Priority: st.Int("prio", 0), Pack: st.Args["pack"], MinTasks: st.Int("min", 0)}
	if j.Share == 0 && j.MIG == "" {
		j.GPUs = st.Int("gpus", 1)
	}
	return j
}

func settle(face Face) ([]string, error) {
	started, preempted, waiting, err := face.Settle()
	if err != nil {
		return nil, err
	}
	var moved, grew, shrank []string
	if m, ok := face.(Mover); ok {
		moved = m.Moved()
	}
	if r, ok := face.(Resizer); ok {
		grew, shrank = r.Resized()
	}
	var out []string
	for _, g := range []struct {
		word  string
		names []string
	}{{"start", started}, {"move", moved}, {"grow", grew}, {"shrink", shrank}, {"preempt", preempted}, {"waiting", waiting}} {
		names := slices.Sorted(slices.Values(g.names))
		for _, n := range names {
			out = append(out, g.word+" "+n)
		}
	}
	return append(out, "--"), nil
}

// Sizes follows running jobs' task counts from one call of Resized to
// the next, for a face that resizes: tell it the jobs started in
// between (Started), then hand Changes the counts now.
type Sizes struct {
	last  map[string]int
	fresh map[string]bool
}

// Started notes a job started (or started again) since the last Changes.
func (s *Sizes) Started(name string) {
	if s.fresh == nil {
		s.fresh = map[string]bool{}
	}
	s.fresh[name] = true
}

// Changes returns the jobs whose task count grew and shrank since the
// last call among those that ran then and did not start since, and
// keeps now for the next call.
func (s *Sizes) Changes(now map[string]int) (grew, shrank []string) {
	for name, n := range now {
		before, ok := s.last[name]
		switch {
		case !ok || s.fresh[name]:
		case n > before:
			grew = append(grew, name)
		case n < before:
			shrank = append(shrank, name)
		}
	}
	s.last, s.fresh = now, nil
	return grew, shrank
}
