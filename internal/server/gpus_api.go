package server

import (
	"net/http"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/store"
)

func (s *Server) handleGPUs(w http.ResponseWriter, _ *http.Request, who store.Tenant) {
	out := s.GPUs()
	if !who.Admin {
		hideOthers(&out, who.Name)
	}
	iso := s.Isolation()
	out.Isolation = &iso
	writeJSON(w, http.StatusOK, out)
}

// GPUs lists the machine's GPUs and the tasks on each.
func (s *Server) GPUs() api.GPUList {
	out := api.GPUList{GPUs: make([]api.GPU, len(s.gpus))}
	at := map[int]int{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, g := range s.gpus {
		problem, bad := s.bad[g.Index]
		out.GPUs[i] = api.GPU{Index: g.Index, UUID: g.UUID, Model: g.Model, MemoryMiB: g.MemoryMiB, MIG: g.MIG, Healthy: !bad, Problem: problem}
		at[g.Index] = i
	}
	for _, id := range sortedIDs(s.runs) {
		j := &s.runs[id].job
		for _, t := range j.Tasks {
			for _, g := range t.GPUs {
				i, ok := at[g]
				if !ok {
					continue
				}
				share := 1.0
				switch {
				case t.Milli > 0:
					share = float64(t.Milli) / 1000
				case t.MIG != "":
					share = float64(s.need(&store.Job{Spec: store.Spec{MIG: t.MIG, Tasks: 1}})[gpuFlavor]) / 1000
				}
				out.GPUs[i].Used += share
				out.GPUs[i].Jobs = append(out.GPUs[i].Jobs, api.Use{Job: j.Name(), Tenant: j.Tenant, Rank: t.Rank, MIG: t.MIG, Share: share})
			}
		}
	}
	return out
}

// hideOthers blanks the job and tenant of every use not the viewer's:
// a tenant sees that a GPU is taken, and how much of it, not by what.
func hideOthers(l *api.GPUList, viewer string) {
	for i := range l.GPUs {
		for k, u := range l.GPUs[i].Jobs {
			if u.Tenant != viewer {
				l.GPUs[i].Jobs[k] = api.Use{Other: true, MIG: u.MIG, Share: u.Share}
			}
		}
	}
}

func sortedIDs[V any](m map[uint64]V) []uint64 {
	ids := make([]uint64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	for i := 1; i < len(ids); i++ {
		for k := i; k > 0 && ids[k] < ids[k-1]; k-- {
			ids[k], ids[k-1] = ids[k-1], ids[k]
		}
	}
	return ids
}
