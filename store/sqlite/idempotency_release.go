package sqlite

import "context"

// ReleaseIdempotencyOwners ends the lease of every owner but except, and
// deletes the records in progress of the other owners whose work never
// committed; those whose work committed are orphaned by the lapsed lease.
func (db *DB) ReleaseIdempotencyOwners(ctx context.Context, except string) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := formatTime(tx.now)
	if _, err := tx.exec(ctx, `UPDATE idempotency_owners SET lease_until = ? WHERE id <> ? AND lease_until > ?`,
		now, except, now); err != nil {
		return err
	}
	if _, err := tx.exec(ctx, `DELETE FROM idempotency_keys
		WHERE status = 0 AND ref_id = '' AND owner <> '' AND owner <> ?`, except); err != nil {
		return err
	}
	return tx.Commit()
}
