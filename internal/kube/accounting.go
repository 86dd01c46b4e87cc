package kube

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/corral-sched/corral/internal/gang"
)

// Record is one line of the accounting log (JSON lines). Event is
// "start" when a pod is bound, "group-start" when a pod group's pods are
// bound, "preempted" when a pod is evicted for other work, and "end" when
// a bound pod finishes or goes away.
type Record struct {
	Event  string    `json:"event"`
	Time   time.Time `json:"time"`
	Pod    string    `json:"pod,omitempty"`   // namespace/name
	Group  string    `json:"group,omitempty"` // namespace/name of its pod group
	Queue  string    `json:"queue,omitempty"`
	Tenant string    `json:"tenant"` // the queue's tenant, else the namespace
	Node   string    `json:"node,omitempty"`
	// GPU use: whole GPUs of GPUModel, or one MIG instance of MIGProfile,
	// or time-sliced shares; GPUs counts the fraction of GPUs held.
	GPUModel   string  `json:"gpuModel,omitempty"`
	MIGProfile string  `json:"migProfile,omitempty"`
	Shares     int     `json:"shares,omitempty"`
	GPUs       float64 `json:"gpus"`
	Pods       int     `json:"pods,omitempty"` // group-start: pods started
	// WaitSeconds is from creation to binding (start, group-start).
	WaitSeconds float64 `json:"waitSeconds,omitempty"`
	// RunSeconds and GPUSeconds are from binding to the end (end).
	RunSeconds float64 `json:"runSeconds,omitempty"`
	GPUSeconds float64 `json:"gpuSeconds,omitempty"`
	Phase      string  `json:"phase,omitempty"` // end: Succeeded, Failed, or Deleted
	By         string  `json:"by,omitempty"`    // preempted: the unit that needed the room
}

// ledger writes accounting records to a writer, to the log in the API
// server (store), or both. With neither it writes nothing.
type ledger struct {
	mu    sync.Mutex
	enc   *json.Encoder
	store *apiLog // nil: none
	now   func() time.Time
	done  map[string]bool      // pod uid -> end written
	start map[string]time.Time // pod uid -> bound here, at
}

func newLedger(w io.Writer, now func() time.Time) *ledger {
	l := &ledger{now: now, done: map[string]bool{}, start: map[string]time.Time{}}
	if w != nil {
		l.enc = json.NewEncoder(w)
	}
	return l
}

// off says the ledger writes nowhere.
func (l *ledger) off() bool { return l == nil || l.enc == nil && l.store == nil }

// write writes r; key names what it records, so that the log in the API
// server keeps one record of it whichever replica writes it.
func (l *ledger) write(key string, r Record) {
	if l.off() {
		return
	}
	l.store.addIfSet(key, r)
	if l.enc == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.enc.Encode(r)
}

// podRecord fills the fields every record of pod p has.
func podRecord(event string, p *corev1.Pod, node *corev1.Node, queues map[string]*queueSpec, at time.Time) Record {
	r := Record{Event: event, Time: at.UTC(), Pod: podKey(p), Queue: p.Labels[LabelQueue], Tenant: p.Namespace, Node: p.Spec.NodeName}
	if g := GroupName(p); g != "" {
		r.Group = p.Namespace + "/" + g
	}
	if q := queues[r.Queue]; q != nil && q.Tenant != "" {
		r.Tenant = q.Tenant
	}
	d, err := demand(p)
	if err != nil {
		return r
	}
	if node != nil {
		r.GPUModel = node.Labels[LabelProduct]
	}
	switch {
	case d.GPUs > 0:
		r.GPUs = float64(d.GPUs)
	case d.MIG != "":
		r.MIGProfile = d.MIG
		r.GPUs = float64(gang.InstanceMilli(r.GPUModel, d.MIG)) / 1000
	case d.Shares > 0:
		r.Shares = d.Shares
		if node != nil {
			if f, err := fleetNode(node, &Config{}); err == nil && f.TimeSlices > 0 {
				r.GPUs = float64(d.Shares) / float64(f.TimeSlices)
			}
		}
	}
	return r
}

// started records a pod bound to node at the ledger's now.
func (l *ledger) started(p *corev1.Pod, nodeName string, node *corev1.Node, queues map[string]*queueSpec) {
	if l.off() {
		return
	}
	bound := p.DeepCopy()
	bound.Spec.NodeName = nodeName
	now := l.now()
	r := podRecord("start", bound, node, queues, now)
	r.WaitSeconds = now.Sub(p.CreationTimestamp.Time).Seconds()
	l.mu.Lock()
	l.start[string(p.UID)] = now
	l.mu.Unlock()
	l.write(recordKey("start", string(p.UID)), r)
}

// groupStarted records the pods of a pod group bound in one cycle.
func (l *ledger) groupStarted(group string, pods []*corev1.Pod) {
	if l.off() || len(pods) == 0 {
		return
	}
	now := l.now()
	first := pods[0].CreationTimestamp.Time
	for _, p := range pods {
		if p.CreationTimestamp.Time.Before(first) {
			first = p.CreationTimestamp.Time
		}
	}
	r := Record{Event: "group-start", Time: now.UTC(), Group: group, Queue: pods[0].Labels[LabelQueue], Tenant: pods[0].Namespace,
		Pods: len(pods), WaitSeconds: now.Sub(first).Seconds()}
	l.write(recordKey("group-start", string(pods[0].UID)), r)
}

// ended records the end of a bound pod once: its run time since this
// ledger saw it bound (or since the PodScheduled condition the binding
// set), and GPU-seconds. It returns the record, and false when it wrote
// none.
func (l *ledger) ended(p *corev1.Pod, phase string, node *corev1.Node, queues map[string]*queueSpec) (Record, bool) {
	if l.off() || p.Spec.NodeName == "" {
		return Record{}, false
	}
	l.mu.Lock()
	done, start := l.done[string(p.UID)], l.start[string(p.UID)]
	l.done[string(p.UID)] = true
	delete(l.start, string(p.UID))
	l.mu.Unlock()
	if done {
		return Record{}, false
	}
	now := l.now()
	r := podRecord("end", p, node, queues, now)
	r.Phase = phase
	if start.IsZero() {
		start = boundAt(p) // bound before this replica led
	}
	if !start.IsZero() {
		r.RunSeconds = now.Sub(start).Seconds()
		r.GPUSeconds = r.RunSeconds * r.GPUs
	}
	l.write(recordKey("end", string(p.UID)), r)
	return r, true
}

// endGone records the end of a pod that went away while no replica led,
// from its start record: deleted, now. It returns the record, and false
// when it wrote none.
func (l *ledger) endGone(uid string, start Record) (Record, bool) {
	if l.off() {
		return Record{}, false
	}
	l.mu.Lock()
	done := l.done[uid]
	l.done[uid] = true
	delete(l.start, uid)
	l.mu.Unlock()
	if done {
		return Record{}, false
	}
	r := start
	r.Event, r.Time, r.Phase, r.WaitSeconds = "end", l.now().UTC(), "Deleted", 0
	r.RunSeconds = r.Time.Sub(start.Time).Seconds()
	r.GPUSeconds = r.RunSeconds * r.GPUs
	l.write(recordKey("end", uid), r)
	return r, true
}

// boundAt is when the pod was bound: its PodScheduled=True condition.
func boundAt(p *corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}
