package store

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// TokenInfo is what the store keeps of a token: never the token itself,
// only its hash (the key), whose tenant it is and when it was made and
// last used. ID is the first hex digits of the hash: enough to name the
// token, useless to present it.
type TokenInfo struct {
	ID       string    `json:"id"`
	Tenant   string    `json:"tenant"`
	Created  time.Time `json:"created,omitzero"`
	LastUsed time.Time `json:"last_used,omitzero"`
}

// lastUsedStep is how stale a token's LastUsed may get before
// Authenticate writes it again: one write a minute per token at most.
const lastUsedStep = time.Minute

// decodeToken reads a token record: JSON, or a bare tenant name as
// stores written before token records had times keep it.
func decodeToken(key, v []byte) TokenInfo {
	var ti TokenInfo
	if len(v) > 0 && v[0] == '{' && json.Unmarshal(v, &ti) == nil {
		return ti
	}
	return TokenInfo{ID: string(key[:min(len(key), 12)]), Tenant: string(v)}
}

// IssueToken makes a new random token for the named tenant and stores its
// hash; the token itself is returned once and never stored. With rotate,
// the tenant's other tokens are revoked in the same transaction: they
// are refused from then on.
func (s *Store) IssueToken(tenant string, now time.Time, rotate bool) (string, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	token := tokenPrefix + hex.EncodeToString(raw[:])
	key := hashToken(token)
	err := s.Update(func(tx *Tx) error {
		if _, err := tx.Tenant(tenant); err != nil {
			return err
		}
		if rotate {
			if _, err := tx.revokeTokens(tenant); err != nil {
				return err
			}
		}
		data, err := json.Marshal(TokenInfo{ID: string(key[:12]), Tenant: tenant, Created: now.UTC()})
		if err != nil {
			return err
		}
		return tx.tx.Bucket(bucketTokens).Put(key, data)
	})
	if err != nil {
		return "", fmt.Errorf("issue token for %s: %w", tenant, err)
	}
	return token, nil
}

// Authenticate returns the tenant a token belongs to, and notes when it
// was used (at most once a minute); ErrNotFound for an unknown token.
func (s *Store) Authenticate(token string, now time.Time) (Tenant, error) {
	var tn Tenant
	var ti TokenInfo
	key := hashToken(token)
	err := s.View(func(tx *Tx) error {
		v := tx.tx.Bucket(bucketTokens).Get(key)
		if v == nil {
			return fmt.Errorf("token: %w", ErrNotFound)
		}
		ti = decodeToken(key, v)
		var err error
		tn, err = tx.Tenant(ti.Tenant)
		return err
	})
	if err != nil || now.Sub(ti.LastUsed) < lastUsedStep {
		return tn, err
	}
	err = s.Update(func(tx *Tx) error {
		b := tx.tx.Bucket(bucketTokens)
		if b.Get(key) == nil {
			return fmt.Errorf("token: %w", ErrNotFound) // revoked in between
		}
		ti.LastUsed = now.UTC()
		data, err := json.Marshal(ti)
		if err != nil {
			return err
		}
		return b.Put(key, data)
	})
	return tn, err
}

// Tokens lists the named tenant's tokens, oldest first.
func (s *Store) Tokens(tenant string) ([]TokenInfo, error) {
	var out []TokenInfo
	err := s.View(func(tx *Tx) error {
		return tx.tx.Bucket(bucketTokens).ForEach(func(k, v []byte) error {
			if ti := decodeToken(k, v); ti.Tenant == tenant {
				out = append(out, ti)
			}
			return nil
		})
	})
	slices.SortStableFunc(out, func(a, b TokenInfo) int { return a.Created.Compare(b.Created) })
	return out, err
}

// RevokeTokens deletes every token of the named tenant and says how many.
func (s *Store) RevokeTokens(tenant string) (int, error) {
	n := 0
	err := s.Update(func(tx *Tx) error {
		var err error
		n, err = tx.revokeTokens(tenant)
		return err
	})
	return n, err
}

func (t *Tx) revokeTokens(tenant string) (int, error) {
	b := t.tx.Bucket(bucketTokens)
	var keys [][]byte
	if err := b.ForEach(func(k, v []byte) error {
		if decodeToken(k, v).Tenant == tenant {
			keys = append(keys, slices.Clone(k))
		}
		return nil
	}); err != nil {
		return 0, err
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

// DeleteTenant removes the named tenant and its tokens in one
// transaction; its jobs and accounting records stay.
func (s *Store) DeleteTenant(name string) error {
	return s.Update(func(tx *Tx) error {
		if _, err := tx.Tenant(name); err != nil {
			return err
		}
		if _, err := tx.revokeTokens(name); err != nil {
			return err
		}
		return tx.tx.Bucket(bucketTenants).Delete([]byte(name))
	})
}
