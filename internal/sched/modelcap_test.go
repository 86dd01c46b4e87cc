package sched

import (
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/queue"
)

// A queue of 64 GPUs may hold at most 16 H100s and 8 H200s (queue.ModelCap),
// on 4 H100 nodes and 2 H200 nodes of 8 GPUs. It runs 8 H200s. A job of
// any model lands on the H100s (where placement alone puts it on the
// H200s); one that allows only H200s waits for quota; once the H100 cap
// is full too, a job of any model waits, naming both caps.
func TestModelCaps(t *testing.T) {
	f, err := fleet.Load("../../examples/fleets/two-models.yaml")
	if err != nil {
		t.Fatal(err)
	}
	st, err := gang.New(f)
	if err != nil {
		t.Fatal(err)
	}
	h100, h200 := queue.ModelCap("H100-80GB"), queue.ModelCap("H200-141GB")
	book, err := queue.NewBook([]queue.Spec{{Name: "a", Nominal: queue.Amounts{gpu: 64000, h100: 16000, h200: 8000}, Order: queue.PriorityFIFO}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	charger := Charger{GPU: gpu, ByModel: true}
	ofModels := func(name string, gpus int, models ...string) *job.Job {
		return &job.Job{Name: name, Groups: []job.Group{{Name: "w", Count: 1, Task: job.Demand{GPUs: gpus, CPUMilli: 1000, MemoryMiB: 1024, Models: models}}}}
	}
	run := ofModels("running", 8, "H200")
	p, u := st.Place(run)
	if u != nil {
		t.Fatal(u)
	}
	if _, err := book.Admit("a", charger.Placed(st, p)); err != nil {
		t.Fatal(err)
	}
	running := []Running{{Name: "running", Queue: "a", Need: charger.Placed(st, p), GPUs: 8, Started: t0}}
	cycle := func(jobs ...*job.Job) Decisions {
		var pending []Unit
		for i, j := range jobs {
			pending = append(pending, Unit{Job: j, Queue: "a", Need: charger.Need(st, j), Arrival: int64(i)})
		}
		return Cycle(&Snapshot{Now: t0, State: st, Book: book, Running: running, Pending: pending,
			Config: Config{Charge: func(p *gang.Placement) queue.Amounts { return charger.Placed(st, p) }}})
	}
	d := cycle(ofModels("any", 8), ofModels("h200-only", 1, "H200-141GB"))
	if !started(d, "any") || started(d, "h200-only") {
		t.Fatalf("want any started and h200-only held: %v", transcript(d))
	}
	if node := f.Nodes[d.Starts[0].Placement.Tasks[0].Node]; node.GPUModel != "H100-80GB" {
		t.Errorf("the job of any model landed on %s, over the H200 cap", node.GPUModel)
	}
	if w, _ := waitOf(d, "h200-only"); w.Code != CodeQuota {
		t.Errorf("h200-only waits %v (%s), want quota", w.Code, w.Reason)
	}
	running = append(running, Running{Name: "any", Queue: "a", Need: d.Starts[0].Admission.Need, GPUs: 8, Started: t0})
	if got := book.Usage("a"); got[h200] != 8000 || got[h100] != 8000 || got[gpu] != 16000 {
		t.Errorf("usage %v, want 8 H100s and 8 H200s of 16 GPUs", got)
	}
	if _, err := book.Admit("a", queue.Amounts{gpu: 8000, h100: 8000}); err != nil { // another 8 H100s run
		t.Fatal(err)
	}
	d = cycle(ofModels("late", 1))
	w, _ := waitOf(d, "late")
	if started(d, "late") || w.Code != CodeQuota || !strings.Contains(w.Reason, "queue a caps GPUs per model, and no model this allows has room for its 1 GPU: H100-80GB has room for 0 GPUs of its 16 GPUs; H200-141GB has room for 0 GPUs of its 8 GPUs") {
		t.Errorf("late: %v, waits %v (%s)", transcript(d), w.Code, w.Reason)
	}
}
