package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// tokenPrefix marks corral tokens so that they are easy to spot in logs
// and secret scanners.
const tokenPrefix = "crl_"

// hashToken is the stored form of a token: the hex SHA-256 of it. Tokens
// are 32 random bytes, so a plain hash is enough.
func hashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return []byte(hex.EncodeToString(sum[:]))
}

// CreateTenant adds a tenant; ErrExists when the name is taken.
func (s *Store) CreateTenant(t Tenant) error {
	return s.Update(func(tx *Tx) error {
		b := tx.tx.Bucket(bucketTenants)
		if b.Get([]byte(t.Name)) != nil {
			return fmt.Errorf("tenant %s: %w", t.Name, ErrExists)
		}
		return tx.PutTenant(t)
	})
}

// PutTenant writes t, replacing any tenant of the same name.
func (t *Tx) PutTenant(tn Tenant) error {
	if tn.Created.IsZero() {
		tn.Created = time.Now().UTC()
	}
	data, err := json.Marshal(tn)
	if err != nil {
		return fmt.Errorf("encode tenant %s: %w", tn.Name, err)
	}
	return t.tx.Bucket(bucketTenants).Put([]byte(tn.Name), data)
}

// Tenant reads the named tenant.
func (t *Tx) Tenant(name string) (Tenant, error) {
	var tn Tenant
	v := t.tx.Bucket(bucketTenants).Get([]byte(name))
	if v == nil {
		return tn, fmt.Errorf("tenant %s: %w", name, ErrNotFound)
	}
	if err := json.Unmarshal(v, &tn); err != nil {
		return tn, fmt.Errorf("decode tenant %s: %w", name, err)
	}
	return tn, nil
}

// Tenant reads the named tenant.
func (s *Store) Tenant(name string) (Tenant, error) {
	var tn Tenant
	err := s.View(func(tx *Tx) error {
		var err error
		tn, err = tx.Tenant(name)
		return err
	})
	return tn, err
}

// UpdateTenant changes the named tenant in one transaction.
func (s *Store) UpdateTenant(name string, fn func(*Tenant) error) (Tenant, error) {
	var tn Tenant
	err := s.Update(func(tx *Tx) error {
		var err error
		if tn, err = tx.Tenant(name); err != nil {
			return err
		}
		if err := fn(&tn); err != nil {
			return err
		}
		return tx.PutTenant(tn)
	})
	return tn, err
}

// Tenants lists every tenant in name order.
func (s *Store) Tenants() ([]Tenant, error) {
	var out []Tenant
	err := s.View(func(tx *Tx) error {
		return tx.tx.Bucket(bucketTenants).ForEach(func(k, v []byte) error {
			var tn Tenant
			if err := json.Unmarshal(v, &tn); err != nil {
				return fmt.Errorf("decode tenant %s: %w", k, err)
			}
			out = append(out, tn)
			return nil
		})
	})
	return out, err
}
