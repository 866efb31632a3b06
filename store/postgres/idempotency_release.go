package postgres

import "context"

// ReleaseIdempotencyOwners ends the lease of every owner but except, and
// deletes the records in progress of the other owners whose work never
// committed; those whose work committed are orphaned by the lapsed lease.
func (db *DB) ReleaseIdempotencyOwners(ctx context.Context, except string) error {
	return db.write(ctx, func(tx *Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE idempotency_owners SET lease_until = $1 WHERE id <> $2 AND lease_until > $1`,
			tx.now, except); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM idempotency_keys
			WHERE status = 0 AND ref_id = '' AND owner <> '' AND owner <> $1`, except)
		return err
	})
}
