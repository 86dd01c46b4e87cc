package server

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/queue"
	"github.com/corral-sched/corral/internal/store"
)

// gpuFlavor is the one flavor the server counts quota in: GPUs of the
// machine's one model.
var gpuFlavor = queue.Flavor{Model: "gpu", Capacity: "local"}

// need is what a job charges its tenant's queue while it runs.
func need(spec store.Spec, model *gpu.Model) queue.Amounts {
	return queue.Amounts{gpuFlavor: int64(milli(spec, model))}
}

// ledger is the tenants' quota book, one queue per tenant, kept across
// cycles so that fair share remembers past use (decayed with the Book's
// half-life). It is rebuilt, forgetting that history, when a quota changes.
type ledger struct {
	book    *queue.Book
	built   string            // the queue specs the book was built from
	epoch   time.Time         // the book's time zero
	charged map[uint64]charge // running jobs admitted to the book
}

// charge is what one running job was admitted for.
type charge struct {
	tenant string
	need   queue.Amounts
}

// sync brings the book up to date with the tenants, the clock and the
// running jobs, and returns it. The caller holds s.mu.
func (l *ledger) sync(s *Server) *queue.Book {
	specs := s.queueSpecs()
	if key := fmt.Sprint(specs); l.book == nil || key != l.built {
		book, err := queue.NewBook(specs, 0)
		if err != nil {
			panic(fmt.Sprintf("server: tenant queues: %v", err)) // specs are built valid
		}
		l.book, l.built, l.epoch, l.charged = book, key, s.now(), map[uint64]charge{}
	}
	if now := s.now().Sub(l.epoch); now >= l.book.Now() {
		_ = l.book.Advance(now) // cannot fail: time moves forward
	}
	for id := range l.charged {
		if r := s.runs[id]; r == nil || r.drained {
			l.release(s, id)
		}
	}
	for id, r := range s.runs {
		if _, ok := l.charged[id]; !ok && !r.drained {
			n := need(r.job.Spec, s.model)
			if _, err := l.book.Admit(r.job.Tenant, n); err == nil {
				l.charged[id] = charge{r.job.Tenant, n}
			}
		}
	}
	for id := range s.claims {
		if _, ok := s.waiting[id]; !ok {
			delete(s.claims, id)
		}
	}
	return l.book
}

// release gives back what job id was charged.
func (l *ledger) release(s *Server, id uint64) {
	c, ok := l.charged[id]
	if !ok {
		return
	}
	if err := l.book.Release(c.tenant, c.need); err != nil {
		s.log.Error("release quota", "job", store.FormatID(id), "tenant", c.tenant, "err", err)
	}
	delete(l.charged, id)
}

// queueSpecs is one queue per tenant that has a record, runs or waits: its
// GPU cap as nominal quota (no cap: the whole machine, so that fair share
// weighs every uncapped tenant alike), raised to what it already runs when
// the cap was lowered below that.
func (s *Server) queueSpecs() []queue.Spec {
	use := map[string]int64{}
	for _, r := range s.runs {
		if !r.drained {
			use[r.job.Tenant] += int64(milli(r.job.Spec, s.model))
		}
	}
	names := map[string]bool{}
	for t := range s.tenants {
		names[t] = true
	}
	for t := range use {
		names[t] = true
	}
	for _, j := range s.waiting {
		names[j.Tenant] = true
	}
	var specs []queue.Spec
	for _, t := range slices.Sorted(maps.Keys(names)) {
		nominal := int64(len(s.gpus)) * 1000
		if q := int64(s.tenants[t].QuotaMilli); q > 0 {
			nominal = max(q, use[t])
		}
		specs = append(specs, queue.Spec{Name: t, Nominal: queue.Amounts{gpuFlavor: nominal}, Order: queue.PriorityFIFO})
	}
	return specs
}

// gpuString writes milli-GPUs as GPUs: "4", "0.5".
func gpuString(m int) string {
	if m%1000 == 0 {
		return fmt.Sprint(m / 1000)
	}
	return strings.TrimRight(fmt.Sprintf("%.3f", float64(m)/1000), "0")
}
