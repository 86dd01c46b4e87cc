package store

import (
	"bytes"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Dump writes every key and value of every bucket in key order: equal
// databases give equal dumps. Tests compare dumps to prove that a request
// changed nothing.
func (s *Store) Dump() ([]byte, error) {
	var buf bytes.Buffer
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			fmt.Fprintf(&buf, "[%s]\n", name)
			return b.ForEach(func(k, v []byte) error {
				fmt.Fprintf(&buf, "%x=%s\n", k, v)
				return nil
			})
		})
	})
	return buf.Bytes(), err
}
