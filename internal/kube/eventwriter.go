package kube

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/reference"
)

// eventWriter writes events as client-go's recorder does (a repeated
// event raises the count of the one written within aggregateFor) but
// never drops one: each goes on a queue without bound, written by
// eventWorkers goroutines, so that a burst (a Scheduled event for each
// pod of a drain) is written late rather than lost, and a decision never
// waits for one. Events of one object, reason and message always go to
// the same worker, in order.
type eventWriter struct {
	client    kubernetes.Interface
	component string
	log       *slog.Logger
	now       func() time.Time
	workers   []*eventQueue
}

const (
	eventWorkers = 4
	aggregateFor = 10 * time.Minute
	// keptEvents bounds what each worker remembers for aggregation.
	keptEvents = 4096
)

type eventQueue struct {
	mu      sync.Mutex
	pending []*corev1.Event
	wake    chan struct{}
	written map[string]writtenEvent // by aggregation key
}

// writtenEvent is an event written, for raising its count.
type writtenEvent struct {
	name, namespace string
	count           int32
	last            time.Time
}

// newEventWriter starts the workers; they stop when ctx ends.
func newEventWriter(ctx context.Context, client kubernetes.Interface, component string, log *slog.Logger, now func() time.Time) *eventWriter {
	w := &eventWriter{client: client, component: component, log: log, now: now}
	for range eventWorkers {
		q := &eventQueue{wake: make(chan struct{}, 1), written: map[string]writtenEvent{}}
		w.workers = append(w.workers, q)
		go w.run(ctx, q)
	}
	return w
}

// Event queues an event about object.
func (w *eventWriter) Event(object runtime.Object, eventtype, reason, message string) {
	ref, err := reference.GetReference(scheme.Scheme, object)
	if err != nil {
		w.log.Warn("event about an object without a reference", "reason", reason, "err", err)
		return
	}
	ns := ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault // a node's, as client-go writes them
	}
	t := metav1.NewTime(w.now())
	ev := &corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%v.%x", ref.Name, t.UnixNano()), Namespace: ns},
		InvolvedObject:      *ref,
		Reason:              reason,
		Message:             message,
		Type:                eventtype,
		Count:               1,
		FirstTimestamp:      t,
		LastTimestamp:       t,
		Source:              corev1.EventSource{Component: w.component},
		ReportingController: w.component,
	}
	q := w.workers[eventShard(eventKey(ev))]
	q.mu.Lock()
	q.pending = append(q.pending, ev)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Eventf is Event with the message formatted.
func (w *eventWriter) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	w.Event(object, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

// AnnotatedEventf is Eventf; the annotations are not written.
func (w *eventWriter) AnnotatedEventf(object runtime.Object, _ map[string]string, eventtype, reason, messageFmt string, args ...any) {
	w.Eventf(object, eventtype, reason, messageFmt, args...)
}

// run writes q's events until ctx ends.
func (w *eventWriter) run(ctx context.Context, q *eventQueue) {
	for {
		q.mu.Lock()
		batch := q.pending
		q.pending = nil
		q.mu.Unlock()
		for _, ev := range batch {
			w.write(ctx, q, ev)
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-q.wake:
		}
	}
}

// write creates ev, or raises the count of the same event written within
// aggregateFor.
func (w *eventWriter) write(ctx context.Context, q *eventQueue, ev *corev1.Event) {
	key := eventKey(ev)
	if old, ok := q.written[key]; ok && ev.LastTimestamp.Sub(old.last) < aggregateFor {
		old.count++
		old.last = ev.LastTimestamp.Time
		patch := fmt.Appendf(nil, `{"count":%d,"lastTimestamp":%q}`, old.count, ev.LastTimestamp.UTC().Format(time.RFC3339))
		_, err := w.client.CoreV1().Events(old.namespace).Patch(ctx, old.name, types.MergePatchType, patch, metav1.PatchOptions{})
		if err == nil {
			q.written[key] = old
			return
		}
		if !apierrors.IsNotFound(err) {
			w.log.Warn("event", "reason", ev.Reason, "object", ev.InvolvedObject.Name, "err", err)
			return
		}
		ev.Count, ev.FirstTimestamp = old.count, metav1.NewTime(old.last) // it expired: write it anew with its count
	}
	if _, err := w.client.CoreV1().Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		if ctx.Err() == nil {
			w.log.Warn("event", "reason", ev.Reason, "object", ev.InvolvedObject.Name, "err", err)
		}
		return
	}
	if len(q.written) >= keptEvents {
		forgetOldest(q.written)
	}
	q.written[key] = writtenEvent{name: ev.Name, namespace: ev.Namespace, count: ev.Count, last: ev.LastTimestamp.Time}
}

// forgetOldest drops the oldest tenth of written.
func forgetOldest(written map[string]writtenEvent) {
	times := make([]time.Time, 0, len(written))
	for _, e := range written {
		times = append(times, e.last)
	}
	slices.SortFunc(times, time.Time.Compare)
	cut := times[len(times)/10]
	for k, e := range written {
		if !e.last.After(cut) {
			delete(written, k)
		}
	}
}

// eventKey is what makes two events the same one: object, type, reason
// and message.
func eventKey(ev *corev1.Event) string {
	o := ev.InvolvedObject
	return string(o.UID) + "\x00" + o.Kind + "\x00" + o.Namespace + "\x00" + o.Name + "\x00" + ev.Type + "\x00" + ev.Reason + "\x00" + ev.Message
}

func eventShard(key string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return int(h.Sum32() % eventWorkers)
}
