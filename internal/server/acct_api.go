package server

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/store"
)

// handleAcct answers accounting queries: ?tenant= (admins; a tenant sees
// only its own), ?since= and ?until= (RFC 3339 or a duration back from
// now, such as 24h), ?period= (a duration to sum by), ?format=csv.
func (s *Server) handleAcct(w http.ResponseWriter, r *http.Request, who store.Tenant) {
	q := r.URL.Query()
	win := store.Window{Tenant: who.Name}
	if who.Admin {
		win.Tenant = q.Get("tenant")
	}
	var err error
	if win.Since, err = s.parseTime(q.Get("since")); err != nil {
		writeError(w, http.StatusBadRequest, "since: "+err.Error())
		return
	}
	if win.Until, err = s.parseTime(q.Get("until")); err != nil {
		writeError(w, http.StatusBadRequest, "until: "+err.Error())
		return
	}
	var period time.Duration
	if p := q.Get("period"); p != "" {
		if period, err = time.ParseDuration(p); err != nil || period < 0 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("period %q: want a duration such as 24h", p))
			return
		}
	}
	recs, err := s.st.Records(win)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	sums, err := s.st.Sums(win, period)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	switch q.Get("format") {
	case "", "json":
		out := acctView(recs, sums)
		out.Machine = s.machine()
		writeJSON(w, http.StatusOK, out)
	case "csv":
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		writeCSV(w, recs)
	default:
		writeError(w, http.StatusBadRequest, "format: want json or csv")
	}
}

// parseTime reads an RFC 3339 time or a duration back from now; "" is
// the zero time.
func (s *Server) parseTime(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(v); err == nil {
		return s.now().Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return t, fmt.Errorf("%q: want RFC 3339 (2026-01-02T15:04:05Z) or a duration back from now (24h)", v)
	}
	return t, nil
}

func acctView(recs []store.Record, sums []store.Sum) api.Acct {
	out := api.Acct{Records: make([]api.Record, 0, len(recs)), Sums: make([]api.Sum, 0, len(sums))}
	for _, r := range recs {
		out.Records = append(out.Records, api.Record{
			Job: store.FormatID(r.JobID), Tenant: r.Tenant, Name: r.Name, Attempt: r.Attempt,
			GPUModel: r.GPUModel, MIGProfile: r.MIGProfile, GPUs: r.GPUs, Start: r.Start, End: r.End,
			GPUSeconds: r.GPUSeconds, State: string(r.State), ExitCode: r.ExitCode, Signal: r.Signal,
			SlurmState: recordSlurmState(r), MaxRSSKiB: r.MaxRSSKiB, CPUSeconds: r.CPUSeconds,
			Submitted: r.Submitted, Tasks: r.Tasks, TaskGPUs: r.TaskGPUs, GPUMilli: r.GPUMilli, CPUMilli: r.CPUMilli,
			MemoryMiB: r.MemoryMiB, Priority: r.Priority, CheckpointSeconds: r.CheckpointEvery.Seconds(), TimeLimitSeconds: r.TimeLimit.Seconds(),
		})
	}
	for _, x := range sums {
		out.Sums = append(out.Sums, api.Sum(x))
	}
	return out
}

// CSVHeader is the first line of acct in CSV.
var CSVHeader = []string{"job", "tenant", "name", "attempt", "gpu_model", "mig_profile", "gpus", "start", "end", "gpu_seconds", "state", "exit_code", "signal", "slurm_state"}

func writeCSV(w http.ResponseWriter, recs []store.Record) {
	cw := csv.NewWriter(w)
	cw.Write(CSVHeader)
	for _, r := range recs {
		cw.Write([]string{
			store.FormatID(r.JobID), r.Tenant, r.Name, strconv.Itoa(r.Attempt), r.GPUModel, r.MIGProfile,
			strconv.FormatFloat(r.GPUs, 'f', -1, 64), r.Start.Format(time.RFC3339Nano), r.End.Format(time.RFC3339Nano),
			strconv.FormatFloat(r.GPUSeconds, 'f', 3, 64), string(r.State), strconv.Itoa(r.ExitCode), r.Signal,
			recordSlurmState(r),
		})
	}
	cw.Flush()
}

// recordSlurmState is how an attempt ended as sacct names it, whatever
// the job did next (a record's state is the job's after the attempt:
// pending again when it was requeued); an older record of an attempt
// that was requeued says REQUEUED.
func recordSlurmState(r store.Record) string {
	switch {
	case r.Outcome != "":
		return r.Outcome
	case r.State.Waiting():
		return "REQUEUED"
	}
	return store.SlurmState(r.State, "")
}

// machine is the machine the server schedules onto, as a replay needs it.
func (s *Server) machine() *api.Machine {
	n := &s.full.Nodes[0]
	return &api.Machine{GPUModel: n.GPUModel, GPUs: n.GPUs, MIG: n.MIG == fleet.MIGDynamic,
		TimeSlices: n.TimeSlices, CPUMilli: n.CPUMilli, MemoryMiB: n.MemoryMiB}
}
