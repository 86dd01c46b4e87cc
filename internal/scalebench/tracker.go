package scalebench

import (
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
)

// tracker keeps the running jobs of one phase and their occupancy in GPU
// eighths, and releases them at random or oldest first.
type tracker struct {
	s     *gang.State
	live  []liveJob
	used  int
	total int
	seq   int
}

type liveJob struct {
	name  string
	units int
}

func newTracker(s *gang.State, gpus int) *tracker {
	return &tracker{s: s, total: gpus * migUnitsPerGPU}
}

func (t *tracker) occupancy() float64 { return float64(t.used) / float64(t.total) }

// name returns a fresh job name with the given prefix.
func (t *tracker) name(prefix string) string {
	t.seq++
	return prefix + strconv.Itoa(t.seq)
}

// place places j and returns the time Place took and whether it placed.
func (t *tracker) place(j *job.Job, units int) (time.Duration, bool) {
	start := time.Now()
	_, unfit := t.s.Place(j)
	d := time.Since(start)
	if unfit != nil {
		return d, false
	}
	t.live = append(t.live, liveJob{j.Name, units})
	t.used += units
	return d, true
}

// releaseAt releases the i-th running job (swapping the last into its
// place) and returns the time Release took.
func (t *tracker) releaseAt(i int) (time.Duration, error) {
	lj := t.live[i]
	start := time.Now()
	err := t.s.Release(lj.name)
	d := time.Since(start)
	if err != nil {
		return d, err
	}
	t.live[i] = t.live[len(t.live)-1]
	t.live = t.live[:len(t.live)-1]
	t.used -= lj.units
	return d, nil
}

// releaseOldest releases the longest-running job, keeping arrival order.
func (t *tracker) releaseOldest() error {
	lj := t.live[0]
	if err := t.s.Release(lj.name); err != nil {
		return err
	}
	t.live = t.live[1:]
	t.used -= lj.units
	return nil
}

// releaseDownTo releases random jobs until occupancy is at most frac.
func (t *tracker) releaseDownTo(rng *rand.Rand, frac float64) error {
	for len(t.live) > 0 && t.occupancy() > frac {
		if _, err := t.releaseAt(rng.IntN(len(t.live))); err != nil {
			return err
		}
	}
	return nil
}

// fillUntil places random 1..gpusPerNode-GPU jobs until occupancy reaches
// frac or one does not fit, and returns how many it placed.
func (t *tracker) fillUntil(rng *rand.Rand, frac float64, gpusPerNode int) int {
	n := 0
	for t.occupancy() < frac {
		g := 1 + rng.IntN(gpusPerNode)
		if _, ok := t.place(oneTask(t.name("f"), wholeGPUs(g, gpusPerNode)), g*migUnitsPerGPU); !ok {
			break
		}
		n++
	}
	return n
}

// wholeGPUs is a task of g whole GPUs with half their node share of CPU
// and memory.
func wholeGPUs(g, gpusPerNode int) job.Demand {
	return job.Demand{GPUs: g,
		CPUMilli:  int64(g) * fleet.DefaultCPUMilli / int64(gpusPerNode) / 2,
		MemoryMiB: int64(g) * fleet.DefaultMemoryMiB / int64(gpusPerNode) / 2}
}

func oneTask(name string, d job.Demand) *job.Job {
	return &job.Job{Name: name, Groups: []job.Group{{Name: "task", Count: 1, Task: d}}}
}
