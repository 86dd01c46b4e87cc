package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// acctKey orders records by end time, then job and attempt.
func acctKey(r *Record) []byte {
	k := binary.BigEndian.AppendUint64(nil, uint64(r.End.UnixNano()))
	k = binary.BigEndian.AppendUint64(k, r.JobID)
	return binary.BigEndian.AppendUint32(k, uint32(r.Attempt))
}

// AddRecord writes an accounting record in this transaction.
func (t *Tx) AddRecord(r Record) error {
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode record of job %d: %w", r.JobID, err)
	}
	return t.tx.Bucket(bucketAcct).Put(acctKey(&r), data)
}

// Window selects accounting records by tenant ("" for all) and by end
// time in [Since, Until); zero times are open ends.
type Window struct {
	Tenant       string
	Since, Until time.Time
}

// Records returns the records in w, oldest end first.
func (s *Store) Records(w Window) ([]Record, error) {
	var out []Record
	err := s.View(func(tx *Tx) error {
		c := tx.tx.Bucket(bucketAcct).Cursor()
		var k, v []byte
		if w.Since.IsZero() {
			k, v = c.First()
		} else {
			k, v = c.Seek(binary.BigEndian.AppendUint64(nil, uint64(w.Since.UnixNano())))
		}
		for ; k != nil; k, v = c.Next() {
			var r Record
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("decode record: %w", err)
			}
			if !w.Until.IsZero() && !r.End.Before(w.Until) {
				break
			}
			if w.Tenant == "" || r.Tenant == w.Tenant {
				out = append(out, r)
			}
		}
		return nil
	})
	return out, err
}

// Sum is the use of one tenant in one period, by GPU model and MIG
// profile.
type Sum struct {
	Tenant     string    `json:"tenant"`
	Period     time.Time `json:"period"` // start of the period
	GPUModel   string    `json:"gpu_model,omitempty"`
	MIGProfile string    `json:"mig_profile,omitempty"`
	Jobs       int       `json:"jobs"`
	GPUSeconds float64   `json:"gpu_seconds"`
}

// Sums adds up the records in w per tenant, period (records fall in the
// period of their end time; period 0 puts them all in one), GPU model and
// MIG profile, sorted by tenant, period, model, profile.
func (s *Store) Sums(w Window, period time.Duration) ([]Sum, error) {
	recs, err := s.Records(w)
	if err != nil {
		return nil, err
	}
	type key struct {
		tenant, model, mig string
		period             int64
	}
	sums := map[key]*Sum{}
	for _, r := range recs {
		k := key{tenant: r.Tenant, model: r.GPUModel, mig: r.MIGProfile}
		if period > 0 {
			k.period = r.End.UnixNano() / int64(period) * int64(period)
		}
		sum := sums[k]
		if sum == nil {
			sum = &Sum{Tenant: k.tenant, GPUModel: k.model, MIGProfile: k.mig}
			if period > 0 {
				sum.Period = time.Unix(0, k.period).UTC()
			}
			sums[k] = sum
		}
		sum.Jobs++
		sum.GPUSeconds += r.GPUSeconds
	}
	out := make([]Sum, 0, len(sums))
	for _, s := range sums {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Tenant != b.Tenant {
			return a.Tenant < b.Tenant
		}
		if !a.Period.Equal(b.Period) {
			return a.Period.Before(b.Period)
		}
		if a.GPUModel != b.GPUModel {
			return a.GPUModel < b.GPUModel
		}
		return a.MIGProfile < b.MIGProfile
	})
	return out, nil
}
