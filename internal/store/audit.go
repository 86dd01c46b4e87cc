package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"
)

// AuditEntry is one admin action: who did what to which tenant, when.
type AuditEntry struct {
	Seq    uint64    `json:"seq"`
	Time   time.Time `json:"time"`
	Actor  string    `json:"actor"`  // the admin tenant whose token acted
	Action string    `json:"action"` // "tenant create", "token rotate", ...
	Target string    `json:"target"` // the tenant acted on
	Detail string    `json:"detail,omitempty"`
}

// AddAudit appends e to the audit log in t, numbering it.
func (t *Tx) AddAudit(e AuditEntry) error {
	b := t.tx.Bucket(bucketAudit)
	seq, err := b.NextSequence()
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	e.Seq, e.Time = seq, e.Time.UTC()
	data, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return b.Put(binary.BigEndian.AppendUint64(nil, seq), data)
}

// Audit appends e to the audit log.
func (s *Store) Audit(e AuditEntry) error {
	return s.Update(func(tx *Tx) error { return tx.AddAudit(e) })
}

// AuditLog lists the audit log, oldest first.
func (s *Store) AuditLog() ([]AuditEntry, error) {
	var out []AuditEntry
	err := s.View(func(tx *Tx) error {
		return tx.tx.Bucket(bucketAudit).ForEach(func(_, v []byte) error {
			var e AuditEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("decode audit entry: %w", err)
			}
			out = append(out, e)
			return nil
		})
	})
	return out, err
}
