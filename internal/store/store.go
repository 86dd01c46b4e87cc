package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Buckets.
var (
	bucketMeta    = []byte("meta")
	bucketJobs    = []byte("jobs")
	bucketTenants = []byte("tenants")
	bucketTokens  = []byte("tokens")
	bucketAcct    = []byte("acct")
	bucketAudit   = []byte("audit")
	keyNextJob    = []byte("next_job")
	keyLearnedMix = []byte("learned_mix")
)

// Sentinel errors, for errors.Is.
var (
	ErrNotFound = errors.New("not found")
	ErrExists   = errors.New("already exists")
)

// Store is an open database. It is safe for concurrent use.
type Store struct {
	db    *bolt.DB
	fault atomic.Pointer[error] // FailWrites
}

// FailWrites makes every write fail with err, before it reaches the
// database, until it is called with nil: the store as a full disk or a
// failing device leaves it, for tests of what a caller keeps when it
// cannot write. Reads go on.
func (s *Store) FailWrites(err error) {
	if err == nil {
		s.fault.Store(nil)
		return
	}
	s.fault.Store(&err)
}

// failing is the error FailWrites set, or nil.
func (s *Store) failing() error {
	if p := s.fault.Load(); p != nil {
		return *p
	}
	return nil
}

// Open opens or creates the database at path.
func Open(path string) (*Store, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketMeta, bucketJobs, bucketTenants, bucketTokens, bucketAcct, bucketAudit} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("init store %s: %w", path, err)
	}
	db.MaxBatchDelay = 2 * time.Millisecond
	return &Store{db: db}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Path is the database file.
func (s *Store) Path() string { return s.db.Path() }

// Tx is one read-write transaction; a scheduling decision is made of the
// calls on one Tx.
type Tx struct{ tx *bolt.Tx }

// Update runs fn in one transaction: all of its writes land, or none.
func (s *Store) Update(fn func(*Tx) error) error {
	if err := s.failing(); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error { return fn(&Tx{tx}) })
}

// View runs fn in a read-only transaction.
func (s *Store) View(fn func(*Tx) error) error {
	return s.db.View(func(tx *bolt.Tx) error { return fn(&Tx{tx}) })
}

func idKey(id uint64) []byte { return binary.BigEndian.AppendUint64(nil, id) }

// Submit stores a new pending job for tenant and returns it with its ID,
// once it is on disk. Concurrent submissions share a transaction (and its
// fsync): bbolt's Batch.
func (s *Store) Submit(tenant string, spec Spec, now time.Time) (Job, error) {
	return s.SubmitJob(Job{Tenant: tenant, Spec: spec}, now)
}

// SubmitJob stores a new pending job made from tmpl (its tenant, spec
// and hold) and returns it with its ID, as Submit does.
func (s *Store) SubmitJob(tmpl Job, now time.Time) (Job, error) {
	if err := s.failing(); err != nil {
		return Job{}, err
	}
	var j Job
	err := s.db.Batch(func(tx *bolt.Tx) error {
		var err error
		j, err = (&Tx{tx}).submit(tmpl, now)
		return err
	})
	return j, err
}

// Submit stores a new pending job in this transaction.
func (t *Tx) Submit(tenant string, spec Spec, now time.Time) (Job, error) {
	return t.submit(Job{Tenant: tenant, Spec: spec}, now)
}

// submit stores tmpl as a new pending job under the next ID.
func (t *Tx) submit(tmpl Job, now time.Time) (Job, error) {
	meta := t.tx.Bucket(bucketMeta)
	next := t.NextID()
	if err := meta.Put(keyNextJob, idKey(next+1)); err != nil {
		return Job{}, fmt.Errorf("submit: %w", err)
	}
	j := tmpl
	j.ID, j.State, j.Submitted = next, Pending, now.UTC()
	return j, t.PutJob(&j)
}

// SubmitArray stores the tasks of a job array made from tmpl, one
// pending job per index, in one transaction: their IDs follow one
// another, and the first is the array's job ID.
func (s *Store) SubmitArray(tmpl Job, now time.Time, indices []int, arr Array) ([]Job, error) {
	var jobs []Job
	err := s.Update(func(tx *Tx) error {
		jobs = jobs[:0]
		first := tx.NextID()
		for _, idx := range indices {
			j := tmpl
			a := arr
			j.ArrayJob, j.ArrayIndex, j.Array = first, idx, &a
			j, err := tx.submit(j, now)
			if err != nil {
				return err
			}
			jobs = append(jobs, j)
		}
		return nil
	})
	return jobs, err
}

// PutJob writes j.
func (t *Tx) PutJob(j *Job) error {
	data, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("encode job %d: %w", j.ID, err)
	}
	if err := t.tx.Bucket(bucketJobs).Put(idKey(j.ID), data); err != nil {
		return fmt.Errorf("write job %d: %w", j.ID, err)
	}
	return nil
}

// Job reads job id.
func (t *Tx) Job(id uint64) (Job, error) {
	var j Job
	v := t.tx.Bucket(bucketJobs).Get(idKey(id))
	if v == nil {
		return j, fmt.Errorf("job %s: %w", FormatID(id), ErrNotFound)
	}
	if err := json.Unmarshal(v, &j); err != nil {
		return j, fmt.Errorf("decode job %d: %w", id, err)
	}
	return j, nil
}

// Jobs calls fn for every job in ID order until fn returns false.
func (t *Tx) Jobs(fn func(*Job) bool) error {
	c := t.tx.Bucket(bucketJobs).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var j Job
		if err := json.Unmarshal(v, &j); err != nil {
			return fmt.Errorf("decode job %d: %w", binary.BigEndian.Uint64(k), err)
		}
		if !fn(&j) {
			return nil
		}
	}
	return nil
}

// PutLearnedMix keeps what the packing policy has learned of the mix of
// jobs (JSON, as the core writes it), for the next server on this store.
func (t *Tx) PutLearnedMix(data []byte) error {
	if err := t.tx.Bucket(bucketMeta).Put(keyLearnedMix, data); err != nil {
		return fmt.Errorf("write the learned mix: %w", err)
	}
	return nil
}

// LearnedMix is what PutLearnedMix kept, nil when nothing is.
func (t *Tx) LearnedMix() []byte {
	return bytes.Clone(t.tx.Bucket(bucketMeta).Get(keyLearnedMix))
}

// NextID is the ID the next submitted job gets.
func (t *Tx) NextID() uint64 {
	if v := t.tx.Bucket(bucketMeta).Get(keyNextJob); v != nil {
		return binary.BigEndian.Uint64(v)
	}
	return 1
}

// Get reads job id.
func (s *Store) Get(id uint64) (Job, error) {
	var j Job
	err := s.View(func(tx *Tx) error {
		var err error
		j, err = tx.Job(id)
		return err
	})
	return j, err
}

// Filter selects jobs; zero fields match everything.
type Filter struct {
	Tenant string
	States []State
}

func (f Filter) match(j *Job) bool {
	if f.Tenant != "" && j.Tenant != f.Tenant {
		return false
	}
	if len(f.States) == 0 {
		return true
	}
	for _, s := range f.States {
		if j.State == s {
			return true
		}
	}
	return false
}

// List returns the jobs f selects, in ID order.
func (s *Store) List(f Filter) ([]Job, error) {
	var out []Job
	err := s.View(func(tx *Tx) error {
		return tx.Jobs(func(j *Job) bool {
			if f.match(j) {
				out = append(out, *j)
			}
			return true
		})
	})
	return out, err
}

// UpdateJob reads job id, lets fn change it, and writes it back, in one
// transaction. An error from fn aborts the write.
func (s *Store) UpdateJob(id uint64, fn func(*Job) error) (Job, error) {
	var j Job
	err := s.Update(func(tx *Tx) error {
		var err error
		if j, err = tx.Job(id); err != nil {
			return err
		}
		if err := fn(&j); err != nil {
			return err
		}
		return tx.PutJob(&j)
	})
	return j, err
}
