package workload

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/openb"
	"github.com/corral-sched/corral/internal/placement"
)

// TimedPod is one row of an 11-column openb pod list: the pod as package
// model reads it, plus what model drops.
type TimedPod struct {
	placement.Pod
	QoS     string        // LS, BE, Burstable, Guaranteed
	Phase   string        // Running, Succeeded, Failed, Pending
	Created time.Duration // creation_time
	// Deleted is deletion_time; HasDeletion is false when the field is
	// empty (the pod outlived the trace).
	Deleted     time.Duration
	HasDeletion bool
	Line        int // line in the source, for messages
}

// Column positions in the 11-column form.
const (
	colQoS, colPhase, colCreated, colDeleted = 6, 7, 8, 9
	timedColumns                             = 11
)

// ReadOpenbTimed parses an 11-column openb pod list; source names the input
// in errors, which give the file and line. Package model checks the
// header, the resource columns and name uniqueness; this adds the QoS,
// phase and times (whole seconds, at least 0; deletion_time may be empty).
// The 5-column form has no times and is rejected.
func ReadOpenbTimed(r io.Reader, source string) ([]TimedPod, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	pods, err := openb.ReadPods(bytes.NewReader(data), source)
	if err != nil {
		return nil, err
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if len(header) != timedColumns {
		return nil, fmt.Errorf("%s:1: %d-column pod list has no creation_time or deletion_time; want the 11-column form",
			source, len(header))
	}
	out := make([]TimedPod, len(pods))
	for i := range out {
		rec, err := cr.Read()
		if err != nil { // model read the same bytes, so this is not expected
			return nil, fmt.Errorf("%s: row %d: %w", source, i+1, err)
		}
		line, _ := cr.FieldPos(0)
		if out[i], err = timedPod(pods[i], rec, line); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", source, line, err)
		}
	}
	return out, nil
}

// timedPod parses the QoS, phase and time columns of one record.
func timedPod(p placement.Pod, rec []string, line int) (TimedPod, error) {
	tp := TimedPod{Pod: p, QoS: strings.TrimSpace(rec[colQoS]), Phase: strings.TrimSpace(rec[colPhase]), Line: line}
	var err error
	if tp.Created, err = parseSeconds(rec[colCreated], "creation_time"); err != nil {
		return tp, err
	}
	if strings.TrimSpace(rec[colDeleted]) == "" {
		return tp, nil
	}
	tp.HasDeletion = true
	tp.Deleted, err = parseSeconds(rec[colDeleted], "deletion_time")
	return tp, err
}

// parseSeconds reads a whole, non-negative number of seconds.
func parseSeconds(s, column string) (time.Duration, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v < 0 || v > int64(1<<62/time.Second) {
		return 0, fmt.Errorf("%s %q is not a whole number of seconds from 0", column, s)
	}
	return time.Duration(v) * time.Second, nil
}

// OpenbOptions say how pods become arrivals.
type OpenbOptions struct {
	// Estimates turns durations into users' estimates (Job.Runtime); the
	// zero Noise gives perfect estimates.
	Estimates Noise
	Seed      uint64 // for Estimates
	// OpenEnd, when above 0, ends a pod with no deletion_time there (the
	// trace's end): it runs OpenEnd - creation_time. At 0 such pods are
	// skipped.
	OpenEnd time.Duration
}

// Skipped names the pods FromOpenb left out, by reason.
type Skipped struct {
	NoDeletion    []string // no deletion_time and no OpenEnd (or OpenEnd not after creation)
	NotAfterStart []string // deletion_time at or before creation_time
}

// Total is the number of pods skipped.
func (s Skipped) Total() int { return len(s.NoDeletion) + len(s.NotAfterStart) }

// String is a one-line summary, for a report or a log line.
func (s Skipped) String() string {
	if s.Total() == 0 {
		return "skipped no pods"
	}
	return fmt.Sprintf("skipped %d pods: %d with no deletion_time%s, %d deleted at or before creation%s",
		s.Total(), len(s.NoDeletion), firstNames(s.NoDeletion), len(s.NotAfterStart), firstNames(s.NotAfterStart))
}

// firstNames lists up to three names, for String.
func firstNames(names []string) string {
	switch {
	case len(names) == 0:
		return ""
	case len(names) <= 3:
		return " (" + strings.Join(names, ", ") + ")"
	}
	return " (" + strings.Join(names[:3], ", ") + ", ...)"
}

// FromOpenb turns pods into a workload of one-task jobs of class Openb:
// arrival at creation_time, duration deletion_time - creation_time, tenant
// the QoS class, preemptible when the QoS is BE (best effort). A pod of
// whole GPUs asks for GPUs, a single shared GPU for GPUMilli, no GPU for
// CPU only; gpu_spec becomes the allowed models. Pods without a positive
// duration are skipped and named in Skipped, never dropped silently. The
// horizon is the latest end of a kept pod.
func FromOpenb(pods []TimedPod, opt OpenbOptions) (Workload, Skipped, error) {
	if err := opt.Estimates.check(); err != nil {
		return Workload{}, Skipped{}, fmt.Errorf("openb: %w", err)
	}
	r := rand.New(rand.NewPCG(opt.Seed, streamJobs))
	var w Workload
	var skipped Skipped
	for i := range pods {
		p := &pods[i]
		end, ok := p.end(opt.OpenEnd)
		switch {
		case !ok:
			skipped.NoDeletion = append(skipped.NoDeletion, p.Name)
			continue
		case end <= p.Created:
			skipped.NotAfterStart = append(skipped.NotAfterStart, p.Name)
			continue
		}
		a, err := p.arrival(end-p.Created, opt.Estimates, r)
		if err != nil {
			return Workload{}, skipped, fmt.Errorf("openb: line %d: %w", p.Line, err)
		}
		w.Arrivals = append(w.Arrivals, a)
		w.Horizon = max(w.Horizon, end)
	}
	SortArrivals(w.Arrivals)
	return w, skipped, nil
}

// end is when the pod ends, or false when it has no end.
func (p *TimedPod) end(openEnd time.Duration) (time.Duration, bool) {
	switch {
	case p.HasDeletion:
		return p.Deleted, true
	case openEnd > p.Created:
		return openEnd, true
	}
	return 0, false
}

// arrival makes the one-task job of p.
func (p *TimedPod) arrival(d time.Duration, noise Noise, r *rand.Rand) (Arrival, error) {
	if err := p.Validate(); err != nil {
		return Arrival{}, err
	}
	demand := job.Demand{CPUMilli: p.CPUMilli, MemoryMiB: p.MemoryMiB, Models: append([]string(nil), p.Models...)}
	switch {
	case p.IsShare():
		demand.GPUMilli = int(p.GPUMilli)
	case p.IsGPU():
		demand.GPUs = p.NumGPU
	}
	j := &job.Job{
		Name:        p.Name,
		Tenant:      p.QoS,
		Groups:      []job.Group{{Name: "pod", Count: 1, Task: demand}},
		Preemptible: p.QoS == "BE",
		Runtime:     noise.estimate(d, r),
	}
	if err := j.Validate(); err != nil {
		return Arrival{}, err
	}
	return Arrival{At: p.Created, Job: j, Duration: d, Class: Openb}, nil
}
