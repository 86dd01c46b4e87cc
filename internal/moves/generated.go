package moves

import (
	"fmt"
	"time"

	"github.com/corral-sched/corral/internal/workload"
)

// Generated is the four-tenant workload (workload.DefaultFourTenants) over
// days, offering load to nodes of 8 GPUs, with every task's demand as the
// shapes give it (the moves decide how it is served), and its label.
func Generated(nodes int, days, load float64, seed uint64) (workload.Workload, string, error) {
	horizon := time.Duration(days * 24 * float64(time.Hour))
	spec, err := workload.DefaultFourTenants(horizon).ForLoad(nodes*8, load)
	if err != nil {
		return workload.Workload{}, "", err
	}
	w, err := workload.Generate(spec, seed)
	label := fmt.Sprintf("generated four-tenant workload, %d jobs, load %.2f of %d GPUs, %.0f days, seed %d", len(w.Arrivals), load, nodes*8, days, seed)
	return w, label, err
}
