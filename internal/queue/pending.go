package queue

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/job"
)

// Pending holds the jobs waiting in each leaf queue, in the queue's Order,
// and gives the global order in which they are considered: queues in the
// Book's fair-share order, each queue's jobs in its own order. It reads
// the Book's shares when asked; it is not safe for concurrent use.
type Pending struct {
	book  *Book
	lists [][]item       // per queue, as in Book.queues, in the queue's order
	where map[string]int // job name -> queue
}

// Entry is a pending job: the queue it waits in and the arrival sequence
// number the caller gave.
type Entry struct {
	Queue   string
	Job     *job.Job
	Arrival int64
}

// item is an entry with the order keys read at Push, so that a caller
// changing the job later cannot break the order.
type item struct {
	Entry
	priority int
	runtime  time.Duration
}

// ErrDuplicateJob is wrapped by Push for a job name already pending.
var ErrDuplicateJob = errors.New("job already pending")

// NewPending is an empty set of pending jobs for the queues of b.
func NewPending(b *Book) *Pending {
	return &Pending{book: b, lists: make([][]item, len(b.queues)), where: map[string]int{}}
}

// Push adds j to leaf queue with the caller's arrival sequence number
// (smaller arrived earlier); j.Queue is not read, the caller resolves it. Job names are unique across all queues. The
// order keys (Priority, Runtime) are read now: to change them, Remove the
// job and Push it again.
func (p *Pending) Push(queue string, j *job.Job, arrival int64) error {
	if j == nil || j.Name == "" {
		return fmt.Errorf("push to queue %q: job with no name", queue)
	}
	i, err := p.book.leaf(queue)
	if err != nil {
		return fmt.Errorf("push job %q: %w", j.Name, err)
	}
	if at, ok := p.where[j.Name]; ok {
		return fmt.Errorf("push job %q to queue %q: %w in queue %q", j.Name, queue, ErrDuplicateJob, p.book.queues[at].spec.Name)
	}
	it := item{Entry: Entry{Queue: queue, Job: j, Arrival: arrival}, priority: j.Priority, runtime: j.Runtime}
	cmpIt := p.compare(i)
	list := p.lists[i]
	k, _ := slices.BinarySearchFunc(list, it, cmpIt)
	p.lists[i] = slices.Insert(list, k, it)
	p.where[j.Name] = i
	return nil
}

// Remove takes the job named name out of its queue; false when it is not
// pending.
func (p *Pending) Remove(name string) (Entry, bool) {
	i, ok := p.where[name]
	if !ok {
		return Entry{}, false
	}
	list := p.lists[i]
	k := slices.IndexFunc(list, func(it item) bool { return it.Job.Name == name })
	e := list[k].Entry
	p.lists[i] = slices.Delete(list, k, k+1)
	delete(p.where, name)
	return e, true
}

// Len is the number of pending jobs.
func (p *Pending) Len() int { return len(p.where) }

// Jobs lists queue's pending jobs in the queue's order.
func (p *Pending) Jobs(queue string) []Entry {
	i, ok := p.book.index[queue]
	if !ok {
		return nil
	}
	return entries(p.lists[i])
}

// QueueOrder lists the queues with pending jobs in fair-share order (see
// Book.Order): lowest share first, ties by name.
func (p *Pending) QueueOrder() []string {
	names := make([]string, 0, len(p.lists))
	for _, i := range p.queueOrder() {
		names = append(names, p.book.queues[i].spec.Name)
	}
	return names
}

func (p *Pending) queueOrder() []int {
	var idx []int
	for i, list := range p.lists {
		if len(list) > 0 {
			idx = append(idx, i)
		}
	}
	return p.book.order(idx)
}

// Heads lists the first job of each queue with pending jobs, queues in
// QueueOrder.
func (p *Pending) Heads() []Entry {
	var out []Entry
	for _, i := range p.queueOrder() {
		out = append(out, p.lists[i][0].Entry)
	}
	return out
}

// All yields every pending job in the global consideration order: queues in
// QueueOrder, each queue's jobs in its order. The order and the jobs are
// taken when the iteration starts; changes during it are not seen.
func (p *Pending) All() iter.Seq[Entry] {
	return func(yield func(Entry) bool) {
		var all []Entry
		for _, i := range p.queueOrder() {
			all = append(all, entries(p.lists[i])...)
		}
		for _, e := range all {
			if !yield(e) {
				return
			}
		}
	}
}

func entries(list []item) []Entry {
	out := make([]Entry, len(list))
	for k, it := range list {
		out[k] = it.Entry
	}
	return out
}

// compare is the order of queue i: its Order's key, then arrival, then job
// name.
func (p *Pending) compare(i int) func(a, b item) int {
	var key func(a, b item) int
	switch p.book.queues[i].spec.Order {
	case PriorityFIFO:
		key = func(a, b item) int { return cmp.Compare(b.priority, a.priority) }
	case ShortestFirst:
		key = func(a, b item) int { return cmp.Compare(runtimeKey(a.runtime), runtimeKey(b.runtime)) }
	default:
		key = func(item, item) int { return 0 }
	}
	return func(a, b item) int {
		return cmp.Or(key(a, b), cmp.Compare(a.Arrival, b.Arrival), strings.Compare(a.Job.Name, b.Job.Name))
	}
}

// runtimeKey sorts unknown runtimes (0) after every known one.
func runtimeKey(d time.Duration) time.Duration {
	if d <= 0 {
		return time.Duration(1<<63 - 1)
	}
	return d
}
