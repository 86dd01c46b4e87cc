package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/workload"
)

// A job that asks for 600Gi of GPU memory on a fleet of H100s and an H200
// runs as the core resolved it (5 H200s) under every policy; one whose
// minimum per GPU no model has is refused when it arrives, with the
// models and their memory; the workload given is left as it was.
func TestAskByGPUMemoryReplaysTheCoresShape(t *testing.T) {
	f := &fleet.Fleet{}
	for i, model := range []string{"H100-80GB", "H100-80GB", "H200-141GB"} {
		f.Nodes = append(f.Nodes, fleet.Node{Name: fmt.Sprintf("n%d", i), CPUMilli: 64000, MemoryMiB: 1 << 20, GPUModel: model, GPUs: 8})
	}
	ask := func(name string, total, perGPU int64) workload.Arrival {
		return workload.Arrival{At: 0, Duration: time.Hour, Class: workload.Recorded,
			Job: &job.Job{Name: name, Tenant: "t", ByGPUMemory: &job.MemoryAsk{TotalMiB: total << 10, MinPerGPUMiB: perGPU << 10}}}
	}
	w := workload.Workload{Horizon: 4 * time.Hour, Arrivals: []workload.Arrival{ask("ft", 600, 0), ask("never", 600, 200)}}
	for _, name := range PolicyNames() {
		p, err := NewPolicy(name)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(f, w, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Jobs) != 1 || res.Jobs[0].Name != "ft" || res.Jobs[0].GPUs != 5 || res.Jobs[0].Tasks != 1 {
			t.Errorf("%s: jobs %+v, want ft alone, 1 task of 5 GPUs", name, res.Jobs)
		}
		if len(res.Refused) != 1 || !res.Refused[0].NoModel || !strings.Contains(res.Refused[0].Reason, "H200-141GB has 141Gi per GPU, under the 200Gi asked") {
			t.Errorf("%s: refused %+v, want never, naming the models' memory", name, res.Refused)
		}
	}
	if w.Arrivals[0].Job.Shape != nil || len(w.Arrivals[0].Job.Groups) != 0 {
		t.Errorf("the workload's job was changed: %+v", w.Arrivals[0].Job)
	}
}
