package twin

import (
	"fmt"
	"slices"
)

// Job is a submitted job as every face takes it: tasks identical tasks of
// GPUs whole GPUs each, charged to Tenant, at Priority.
type Job struct {
	Name     string
	Tenant   string
	GPUs     int
	Tasks    int
	Priority int
}

// Face is corral as one of its faces runs it: it learns a fleet and
// tenants, takes jobs, is told which jobs finish, and when asked to settle
// decides until nothing changes, reporting what it did.
type Face interface {
	Fleet(gpus int) error
	Tenant(name string, quotaGPUs int) error
	Submit(j Job) error
	Finish(name string) error
	// Settle returns the jobs started and the jobs preempted since the last
	// call, and the jobs waiting now.
	Settle() (started, preempted, waiting []string, err error)
}

// Run plays the script's steps on face and returns the transcript.
func Run(face Face, s *Script) ([]string, error) {
	var out []string
	for _, st := range s.Steps {
		var err error
		switch st.Cmd {
		case "fleet":
			err = face.Fleet(st.Int("gpus", 8))
		case "tenant":
			err = face.Tenant(st.Name, st.Int("quota", 0))
		case "submit":
			err = face.Submit(Job{Name: st.Name, Tenant: st.Args["tenant"], GPUs: st.Int("gpus", 1), Tasks: st.Int("tasks", 1), Priority: st.Int("prio", 0)})
		case "finish":
			err = face.Finish(st.Name)
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
