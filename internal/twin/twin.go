package twin

import (
	"fmt"
	"slices"
)

// Fleet is the one machine (or node) of a script: GPUs of Model, each
// cut into Slices time-sliced shares when Slices > 1, or split into MIG
// instances when MIG is set.
type Fleet struct {
	GPUs   int
	Model  string // a catalog name; "" is DefaultModel
	Slices int
	MIG    bool
}

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
// MIG instance of profile MIG; charged to Tenant, at Priority.
type Job struct {
	Name     string
	Tenant   string
	GPUs     int
	Share    int
	MIG      string
	Tasks    int
	Priority int
}

// Face is corral as one of its faces runs it: it learns a fleet and
// tenants, takes jobs, is told which jobs finish and when the machine
// leaves and comes back, and when asked to settle decides until nothing
// changes, reporting what it did.
type Face interface {
	Fleet(f Fleet) error
	Tenant(t Tenant) error
	Submit(j Job) error
	Finish(name string) error
	// Down takes the machine away: its jobs stop and wait again, and
	// nothing is placed until Up brings it back.
	Down() error
	Up() error
	// Settle returns the jobs started and the jobs preempted since the last
	// call, and the jobs waiting now. A job stopped because the machine
	// left is not preempted: it shows as waiting, and as started again.
	Settle() (started, preempted, waiting []string, err error)
}

// Run plays the script's steps on face and returns the transcript.
func Run(face Face, s *Script) ([]string, error) {
	var out []string
	for _, st := range s.Steps {
		var err error
		switch st.Cmd {
		case "fleet":
			err = face.Fleet(Fleet{GPUs: st.Int("gpus", 8), Model: st.Args["model"], Slices: st.Int("slices", 0), MIG: st.Args["mig"] == "true"})
		case "tenant":
			err = face.Tenant(Tenant{Name: st.Name, Quota: st.Int("quota", 0), Cohort: st.Args["cohort"]})
		case "submit":
			err = face.Submit(jobOf(st))
		case "finish":
			err = face.Finish(st.Name)
		case "down":
			err = face.Down()
		case "up":
			err = face.Up()
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
		Tasks: st.Int("tasks", 1), Priority: st.Int("prio", 0)}
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
	var out []string
	for _, g := range []struct {
		word  string
		names []string
	}{{"start", started}, {"preempt", preempted}, {"waiting", waiting}} {
		names := slices.Sorted(slices.Values(g.names))
		for _, n := range names {
			out = append(out, g.word+" "+n)
		}
	}
	return append(out, "--"), nil
}
