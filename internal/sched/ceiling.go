package sched

import (
	"errors"
	"fmt"

	"github.com/corral-sched/corral/internal/queue"
)

// Ceiling is the most each queue could ever be admitted: the queues'
// quotas with nothing admitted anywhere, so that every cohort lends all
// its lending limits allow. A unit the ceiling refuses would wait forever,
// so every face refuses it when it is submitted (and the simulator when it
// arrives), by this one check. It is not safe for concurrent use.
type Ceiling struct {
	book *queue.Book
}

// NewCeiling is the ceiling of the queues specs describes.
func NewCeiling(specs []queue.Spec) (*Ceiling, error) {
	book, err := queue.NewBook(specs, 0)
	if err != nil {
		return nil, fmt.Errorf("quota ceiling: %w", err)
	}
	return &Ceiling{book: book}, nil
}

// Refuse says why no state of the queues could ever admit need to queue
// q, or returns nil when some state could (the unit may have to wait for
// it). The error is a *Refusal when quota is what refuses it.
func (c *Ceiling) Refuse(q string, need queue.Amounts) error {
	err := c.book.CanAdmit(q, need)
	if err == nil {
		return nil
	}
	var qe *queue.QuotaError
	if !errors.As(err, &qe) {
		return fmt.Errorf("queue %s: %w", q, err)
	}
	r := &Refusal{Queue: q, Level: qe.Level, Flavor: qe.Flavor, Need: qe.Need, Most: qe.Room}
	if spec, ok := c.book.Spec(qe.Level); ok {
		r.Own = spec.Nominal[qe.Flavor]
		r.Cohort = spec.Cohort
	}
	return r
}

// Refusal is a unit no quota it could ever hold or borrow admits: at
// queue Level (Queue or one of its parents), in Flavor, it needs Need and
// the most the queue could ever hold is Most, its Own nominal quota and
// what the rest of its Cohort could lend it.
type Refusal struct {
	Queue, Level string
	Flavor       queue.Flavor
	Need, Most   int64
	Own          int64
	Cohort       string
}

func (r *Refusal) Error() string {
	at := r.Queue
	if r.Level != r.Queue {
		at = fmt.Sprintf("%s (through its parent %s)", r.Queue, r.Level)
	}
	lent := ""
	if r.Cohort != "" {
		lent = fmt.Sprintf(": its own %s and %s its cohort %s could lend",
			Amount(r.Flavor, r.Own), Amount(r.Flavor, max(r.Most-r.Own, 0)), r.Cohort)
	}
	return fmt.Sprintf("%s can never hold more than %s%s; the job needs %s",
		at, Amount(r.Flavor, r.Most), lent, Amount(r.Flavor, r.Need))
}

// Amount writes v of flavor f in its unit: GPUs (v in milli-GPUs), CPUs
// (v in milli-cores) or MiB of memory.
func Amount(f queue.Flavor, v int64) string {
	switch f {
	case queue.CPU:
		return queue.MilliString(v) + " CPUs"
	case queue.Memory:
		return fmt.Sprintf("%d MiB of memory", v)
	}
	if v == queue.Milli {
		return "1 GPU"
	}
	return queue.MilliString(v) + " GPUs"
}
