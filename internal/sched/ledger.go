package sched

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/corral-sched/corral/internal/queue"
)

// Ledger is a face's quota book kept across cycles, so that fair share
// remembers past use (decayed with the Book's half-life). Each cycle the
// face hands it the queues and the running units. When the queues change
// (a tenant is created, a quota changes) the book is rebuilt for them and
// every queue that stays keeps its fair-share history (queue.Book.Respec).
type Ledger struct {
	book    *queue.Book
	built   string    // the queue specs the book was built from
	epoch   time.Time // the book's time zero
	charged map[string]charge
}

// charge is what one running unit was admitted for.
type charge struct {
	queue string
	need  queue.Amounts
}

// Sync brings the book up to date with the queues, the time and the
// running units (each charged its Need to its Queue, held over the quota
// when the queues shrank below what runs: queue.Book.Hold), and returns
// it for the cycle's Snapshot. Units that no longer run give their charge back.
func (l *Ledger) Sync(specs []queue.Spec, running []Running, now time.Time) (*queue.Book, error) {
	if key := fmt.Sprint(specs); l.book == nil || key != l.built {
		if err := l.rebuild(specs, now); err != nil {
			return nil, err
		}
		l.built = key
	}
	if t := now.Sub(l.epoch); t >= l.book.Now() {
		_ = l.book.Advance(t) // cannot fail: time moves forward
	}
	live := make(map[string]bool, len(running))
	for _, r := range running {
		live[r.Name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(l.charged)) {
		if !live[name] {
			l.Release(name)
		}
	}
	for _, r := range running {
		if c, ok := l.charged[r.Name]; ok && (c.queue != r.Queue || !c.need.Equal(r.Need)) {
			l.Release(r.Name) // it grew (a pod group's later pods) or moved
		}
		if _, ok := l.charged[r.Name]; !ok && r.Queue != "" {
			_, err := l.book.Admit(r.Queue, r.Need)
			if errors.Is(err, queue.ErrNoQuota) {
				err = l.book.Hold(r.Queue, r.Need) // it runs: over its quota, not uncounted
			}
			if err == nil {
				l.charged[r.Name] = charge{r.Queue, r.Need}
			}
		}
	}
	return l.book, nil
}

// rebuild makes the book anew for specs, with nothing admitted (Sync
// admits the running units again), keeping the fair-share history and
// time of the queues that stay.
func (l *Ledger) rebuild(specs []queue.Spec, now time.Time) error {
	if l.book == nil {
		book, err := queue.NewBook(specs, 0)
		if err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		l.book, l.epoch = book, now
	} else {
		book, err := l.book.Respec(specs)
		if err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		l.book = book
	}
	l.charged = map[string]charge{}
	return nil
}

// Started records the charges the cycle admitted for the units it started
// under the names they will run as.
func (l *Ledger) Started(name, queue string, need queue.Amounts) {
	if queue != "" {
		l.charged[name] = charge{queue, need}
	}
}

// Release gives back what the named unit was charged, if anything.
func (l *Ledger) Release(name string) {
	c, ok := l.charged[name]
	if !ok {
		return
	}
	_ = l.book.Release(c.queue, c.need) // the book holds what it admitted
	delete(l.charged, name)
}

// QueueUse is what one queue holds in the ledger's book now, in GPU
// thousandths of every GPU flavor: Used (admitted to it or below it),
// Nominal (its own quota), Borrowed (used beyond its nominal quota: lent
// by its cohort, or held beyond it when the quotas shrank under running
// work) and Lent (of its nominal quota, used by its peers).
type QueueUse struct {
	Queue                         string
	Used, Nominal, Borrowed, Lent int64
}

// Use is what every queue holds now, in the book's order; nothing before
// the first Sync. Faces read it for their metrics.
func (l *Ledger) Use() []QueueUse {
	if l.book == nil {
		return nil
	}
	var out []QueueUse
	for _, q := range l.book.Queues() {
		spec, _ := l.book.Spec(q)
		out = append(out, QueueUse{Queue: q, Used: gpuMilli(l.book.Usage(q)), Nominal: gpuMilli(spec.Nominal),
			Borrowed: gpuMilli(l.book.Borrowed(q)), Lent: gpuMilli(l.book.Lent(q))})
	}
	return out
}

// gpuMilli sums the GPU flavors of a.
func gpuMilli(a queue.Amounts) int64 {
	var n int64
	for f, v := range a {
		if f.IsGPU() {
			n += v
		}
	}
	return n
}
