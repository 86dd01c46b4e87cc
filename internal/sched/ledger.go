package sched

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/corral-sched/corral/internal/queue"
)

// Ledger is a face's quota book kept across cycles, so that fair share
// remembers past use (decayed with the Book's half-life). Each cycle the
// face hands it the queues and the running units; it is rebuilt,
// forgetting that history, when the queues change.
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
// running units (each charged its Need to its Queue), and returns it for
// the cycle's Snapshot. Units that no longer run give their charge back.
func (l *Ledger) Sync(specs []queue.Spec, running []Running, now time.Time) (*queue.Book, error) {
	if key := fmt.Sprint(specs); l.book == nil || key != l.built {
		book, err := queue.NewBook(specs, 0)
		if err != nil {
			return nil, fmt.Errorf("ledger: %w", err)
		}
		l.book, l.built, l.epoch, l.charged = book, key, now, map[string]charge{}
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
			if _, err := l.book.Admit(r.Queue, r.Need); err == nil {
				l.charged[r.Name] = charge{r.Queue, r.Need}
			}
		}
	}
	return l.book, nil
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
