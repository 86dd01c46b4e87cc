package sim

import (
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/faultrec"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/workload"
)

// A gang that must stay in one rack loses a node: with a hot spare in the
// rack it restarts on the spare at once from its last checkpoint, and the
// short preemptible job borrowing the spare goes back to the queue;
// without one it waits for the repair.
func TestNodeFailureMovesAGangToTheRacksSpare(t *testing.T) {
	gangJob := checkpointing(arrival("gang", 0, 2, 8, 10*time.Hour, 10*time.Hour), time.Hour)
	gangJob.Job.Topology = []job.Constraint{{Level: "rack", Required: true}}
	borrower := arrival("borrower", 2*time.Hour, 1, 8, time.Hour, time.Hour)
	borrower.Job.Preemptible = true
	faults := []workload.Fault{
		{At: 150 * time.Minute, Kind: workload.NodeFailure, Node: "n0"},
		{At: 6 * time.Hour, Kind: workload.NodeRepair, Node: "n0"},
	}
	for _, spare := range []bool{true, false} {
		f := smallFleet(3, 8)
		f.Nodes[2].Spare = spare
		if !spare {
			f.Nodes = f.Nodes[:2] // the same rack without its third node
		}
		p, _ := NewPolicy("corral")
		res, err := RunWith(f, workload.Workload{Arrivals: []workload.Arrival{gangJob, borrower}, Faults: faults, Horizon: 24 * time.Hour}, p, Options{Explain: "gang"})
		if err != nil {
			t.Fatal(err)
		}
		g := record(t, res, "gang")
		// Either way: 2.5 h run, checkpoint at 2 h, 0.5 h x 16 GPUs lost.
		if g.Interruptions != 1 || g.LostGPUHours != 8 {
			t.Errorf("spare %v: gang interrupted %d times, lost %.2f GPU-h; want 1 and 8", spare, g.Interruptions, g.LostGPUHours)
		}
		wantEnd := 150*time.Minute + 8*time.Hour // restarts at once with 8 h left
		if !spare {
			wantEnd = 6*time.Hour + 8*time.Hour // waits for the repair
		}
		if g.End != wantEnd {
			t.Errorf("spare %v: gang ends at %v, want %v\n%v", spare, g.End, wantEnd, res.Explain)
		}
		want := faultrec.Record{Event: "fault", Time: time.Unix(0, 0).UTC().Add(150 * time.Minute), Kind: faultrec.NodeFailure, Node: "n0",
			Work: "gang", Action: faultrec.Requeued, GPUs: 16, LostGPUHours: 8}
		if spare {
			want.Action, want.To = faultrec.Replaced, "n2"
		}
		if len(res.Faults) != 1 || res.Faults[0] != want {
			t.Errorf("spare %v: fault records %+v, want %+v", spare, res.Faults, want)
		}
		if spare {
			b := record(t, res, "borrower")
			if b.Interruptions != 1 || !b.Finished {
				t.Errorf("borrower: %d interruptions, finished %v; want evicted once from the spare, then done", b.Interruptions, b.Finished)
			}
		}
		for _, h := range res.Hours {
			for _, gr := range h.Groups {
				if gr.Used > gr.Allocated+1e-9 || gr.Allocated < 0 {
					t.Fatalf("spare %v hour %d: %+v", spare, h.Hour, gr)
				}
			}
		}
	}
}
