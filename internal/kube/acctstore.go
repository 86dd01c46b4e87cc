package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
)

// The accounting log in the API server, so that it outlives a replica and
// a new leader continues it: ConfigMaps NAMESPACE/PREFIX-NNNNNN, labelled
// LabelAccounting=PREFIX, each a segment of records keyed by what they
// record ("start.<pod uid>", "end.<pod uid>", ...), so that a record
// written twice, by two leaders, is one. Segments hold up to
// segmentBytes; the oldest are deleted beyond MaxAccountingSegments.

// LabelAccounting marks the ConfigMaps of an accounting log.
const LabelAccounting = "corral.sh/accounting"

// MaxAccountingSegments bounds the log: about 24 MiB, 70,000 records.
const MaxAccountingSegments = 32

// segmentBytes is what one ConfigMap holds, below the API server's 1 MiB.
const segmentBytes = 768 << 10

// keyed is a record and its key.
type keyed struct {
	key  string
	line []byte
}

// apiLog writes accounting records to ConfigMaps from a goroutine of its
// own; a record waits in memory until written.
type apiLog struct {
	client     kubernetes.Interface
	ns, prefix string
	log        *slog.Logger
	kick       chan struct{}

	mu      sync.Mutex
	queue   []keyed
	known   map[string]bool // keys written or read back
	seg     int             // the segment written to
	segSize int             // its bytes
	dropped atomic.Int64    // records left out: refused by the API server
}

// newAPILog returns the log at "namespace/prefix", or nil for "".
func newAPILog(client kubernetes.Interface, at string, log *slog.Logger) (*apiLog, error) {
	if at == "" {
		return nil, nil
	}
	ns, prefix, ok := strings.Cut(at, "/")
	if !ok || ns == "" || prefix == "" {
		return nil, fmt.Errorf("accounting ConfigMaps %q: want namespace/prefix", at)
	}
	if err := validLogName(ns, prefix); err != nil {
		return nil, fmt.Errorf("accounting ConfigMaps %q: %w", at, err)
	}
	return &apiLog{client: client, ns: ns, prefix: prefix, log: log, kick: make(chan struct{}, 1), known: map[string]bool{}}, nil
}

var keyInvalid = regexp.MustCompile(`[^-._a-zA-Z0-9]`)

// recordKey is a ConfigMap key for what a record records: its parts
// joined by dots, any character a key may not hold as "_".
func recordKey(parts ...string) string {
	return keyInvalid.ReplaceAllString(strings.Join(parts, "."), "_")
}

// validLogName checks the log's names as the API server will: the
// namespace, the segments' names (prefix-NNNNNN) and the label value
// naming the log (the prefix).
func validLogName(ns, prefix string) error {
	var errs []string
	errs = append(errs, prefixed("namespace", validation.IsDNS1123Label(ns))...)
	errs = append(errs, prefixed("segment name", validation.IsDNS1123Subdomain(prefix+"-000000"))...)
	errs = append(errs, prefixed("label value", validation.IsValidLabelValue(prefix))...)
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

func prefixed(what string, errs []string) []string {
	for i, e := range errs {
		errs[i] = what + ": " + e
	}
	return errs
}

func (a *apiLog) segName(i int) string { return fmt.Sprintf("%s-%06d", a.prefix, i) }

// addIfSet adds the record to the log, if there is one.
func (a *apiLog) addIfSet(key string, r Record) {
	if a != nil {
		a.add(key, r)
	}
}

// add queues a record unless its key was written already.
func (a *apiLog) add(key string, r Record) {
	line, err := json.Marshal(r)
	if err != nil {
		return
	}
	a.addLine(key, line)
}

// addLine queues a JSON line unless its key was written already; a key
// the API server would refuse is reported and the record left out.
func (a *apiLog) addLine(key string, line []byte) {
	if a == nil {
		return
	}
	if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
		a.log.Error("accounting log: record left out, its key is not a ConfigMap key", "key", key, "err", strings.Join(errs, "; "))
		return
	}
	a.mu.Lock()
	if !a.known[key] {
		a.known[key] = true
		a.queue = append(a.queue, keyed{key, line})
	}
	a.mu.Unlock()
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// segments lists the log's ConfigMaps, oldest first.
func (a *apiLog) segments(ctx context.Context) ([]corev1.ConfigMap, error) {
	list, err := a.client.CoreV1().ConfigMaps(a.ns).List(ctx, metav1.ListOptions{LabelSelector: LabelAccounting + "=" + a.prefix})
	if err != nil {
		return nil, fmt.Errorf("accounting log %s/%s: %w", a.ns, a.prefix, err)
	}
	items := list.Items
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	return items, nil
}

// load reads the log back: every key, and the records by key; the next
// writes go to its newest segment.
func (a *apiLog) load(ctx context.Context) (map[string]Record, error) {
	segs, err := a.segments(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]Record{}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seg, a.segSize = 0, 0
	for _, cm := range segs {
		var n int
		if _, err := fmt.Sscanf(strings.TrimPrefix(cm.Name, a.prefix+"-"), "%d", &n); err == nil && n >= a.seg {
			a.seg, a.segSize = n, 0
			for k, v := range cm.Data {
				a.segSize += len(k) + len(v)
			}
		}
		for k, v := range cm.Data {
			var r Record
			if json.Unmarshal([]byte(v), &r) == nil {
				out[k] = r
				a.known[k] = true
			}
		}
	}
	return out, nil
}

// run writes queued records until ctx ends, retrying what fails, then
// writes what is left once more.
func (a *apiLog) run(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			final, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := a.flush(final); err != nil {
				a.log.Warn("accounting log: records not written", "err", err)
			}
			return
		case <-a.kick:
		case <-tick.C:
		}
		if err := a.flush(ctx); err != nil && ctx.Err() == nil {
			a.log.Warn("accounting log", "err", err)
		}
	}
}

// flush writes the queued records, a segment's worth per request.
func (a *apiLog) flush(ctx context.Context) error {
	for {
		a.mu.Lock()
		if len(a.queue) == 0 {
			a.mu.Unlock()
			return nil
		}
		if a.segSize >= segmentBytes {
			a.seg, a.segSize = a.seg+1, 0
		}
		batch, size := map[string]string{}, 0
		n := 0
		for ; n < len(a.queue) && a.segSize+size < segmentBytes; n++ {
			k := a.queue[n]
			batch[k.key] = string(k.line)
			size += len(k.key) + len(k.line)
		}
		seg := a.seg
		a.mu.Unlock()
		if err := a.writeSegment(ctx, seg, batch); refused(err) {
			a.writeEach(ctx, seg, batch)
		} else if err != nil {
			return err
		}
		a.mu.Lock()
		a.queue = a.queue[n:]
		if a.seg == seg {
			a.segSize += size
		}
		a.mu.Unlock()
	}
}

// refused reports whether the API server refused a write for what it
// holds (invalid, too large), which writing it again cannot mend.
func refused(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsRequestEntityTooLargeError(err)
}

// writeEach writes a refused batch one record at a time, so that one bad
// record does not hold back the others: a record refused alone is
// reported and left out, never retried; other failures are retried with
// the next records.
func (a *apiLog) writeEach(ctx context.Context, seg int, batch map[string]string) {
	keys := make([]string, 0, len(batch))
	for k := range batch {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var retry []keyed
	for _, k := range keys {
		err := a.writeSegment(ctx, seg, map[string]string{k: batch[k]})
		switch {
		case refused(err):
			a.log.Error("accounting log: record refused by the API server, left out", "key", k, "err", err)
			a.dropped.Add(1)
		case err != nil:
			retry = append(retry, keyed{k, []byte(batch[k])})
		}
	}
	if len(retry) > 0 {
		a.mu.Lock()
		a.queue = append(a.queue, retry...)
		a.mu.Unlock()
	}
}

// writeSegment adds data to segment seg, creating it (and deleting the
// oldest beyond MaxAccountingSegments) when it is not there.
func (a *apiLog) writeSegment(ctx context.Context, seg int, data map[string]string) error {
	cms := a.client.CoreV1().ConfigMaps(a.ns)
	patch, err := json.Marshal(map[string]any{"data": data})
	if err != nil {
		return err
	}
	_, err = cms.Patch(ctx, a.segName(seg), types.MergePatchType, patch, metav1.PatchOptions{})
	if !apierrors.IsNotFound(err) {
		return wrapLog(a, err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: a.segName(seg), Namespace: a.ns, Labels: map[string]string{LabelAccounting: a.prefix}}, Data: data}
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return wrapLog(a, err)
	}
	segs, err := a.segments(ctx)
	if err != nil {
		return err
	}
	for i := 0; i < len(segs)-MaxAccountingSegments; i++ {
		if err := cms.Delete(ctx, segs[i].Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return wrapLog(a, err)
		}
	}
	return nil
}

func wrapLog(a *apiLog, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("accounting log %s/%s: %w", a.ns, a.prefix, err)
}

// ReadAccounting reads the accounting log kept in ConfigMaps at
// "namespace/prefix", in time order (then by key).
func ReadAccounting(ctx context.Context, client kubernetes.Interface, at string) ([]Record, error) {
	a, err := newAPILog(client, at, slog.Default())
	if err != nil || a == nil {
		return nil, err
	}
	byKey, err := a.load(ctx)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ti, tj := byKey[keys[i]].Time, byKey[keys[j]].Time
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return keys[i] < keys[j]
	})
	out := make([]Record, len(keys))
	for i, k := range keys {
		out[i] = byKey[k]
	}
	return out, nil
}

// resume continues the log as a new leader: what the log says started
// and ended is known again, and pods that ended, or went away, while no
// replica led get their end records now.
func (s *Scheduler) resumeAccounting(ctx context.Context) {
	a := s.ledger.store
	if a == nil {
		return
	}
	byKey, err := a.load(ctx)
	if err != nil {
		s.log.Warn("accounting log not read back; continuing without it", "err", err)
		return
	}
	starts, ends := map[string]Record{}, map[string]Record{}
	s.ledger.mu.Lock()
	for k, r := range byKey {
		event, uid, _ := strings.Cut(k, ".")
		switch event {
		case "start":
			starts[uid] = r
			if !s.ledger.done[uid] {
				s.ledger.start[uid] = r.Time
			}
		case "end":
			ends[uid] = r
			s.ledger.done[uid] = true
			delete(s.ledger.start, uid)
		}
	}
	s.ledger.mu.Unlock()
	queues := s.queueSpecs()
	for uid, r := range ends { // the budgets' ended use (budget.go)
		s.spent.addRecord(uid, r, queues)
	}
	s.endMissed(starts, queues)
}

// endMissed writes the end records of started pods that finished or went
// away while no replica led.
func (s *Scheduler) endMissed(starts map[string]Record, queues map[string]*queueSpec) {
	pods, err := s.pods.List(labels.Everything())
	if err != nil {
		return
	}
	seen := map[string]bool{}
	for _, p := range pods {
		uid := string(p.UID)
		if _, ok := starts[uid]; !ok {
			continue
		}
		seen[uid] = true
		if terminal(p) && p.Spec.SchedulerName == s.cfg.SchedulerName {
			if r, ok := s.ledger.ended(p, string(p.Status.Phase), s.node(p.Spec.NodeName), queues); ok {
				s.spent.addRecord(uid, r, queues)
			}
		}
	}
	uids := make([]string, 0, len(starts))
	for uid := range starts {
		uids = append(uids, uid)
	}
	sort.Strings(uids)
	for _, uid := range uids {
		if seen[uid] {
			continue
		}
		if r, ok := s.ledger.endGone(uid, starts[uid]); ok {
			s.spent.addRecord(uid, r, queues)
		}
	}
}

// accountingStore opens the log Config.AccountingConfigMaps names, or
// returns nil.
func (s *Scheduler) accountingStore() *apiLog {
	a, err := newAPILog(s.client, s.cfg.AccountingConfigMaps, s.log)
	if err != nil {
		s.log.Error("accounting log", "err", err)
	}
	return a
}

// continueAccounting reads the log back as this replica starts leading
// and starts its writer; the returned function, called when leading ends,
// waits until the writer has written what is queued.
func (s *Scheduler) continueAccounting(ctx context.Context) func() {
	a := s.ledger.store
	if a == nil {
		return func() {}
	}
	s.resumeAccounting(ctx)
	done := make(chan struct{})
	go func() { defer close(done); a.run(ctx) }()
	return func() { <-done }
}
