package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/idempotency"
)

// Compile-time check that Store keeps idempotency keys.
var _ idempotency.Store = (*Store)(nil)

// pruneIdempotencyBatch bounds how many expired keys one reservation
// deletes, so that the table does not grow without bound and no single
// request pays for a large clean-up.
const pruneIdempotencyBatch = 100

const idempotencyCols = `workspace_id, key, request_hash, status, content_type, body, created_at, completed_at,
	owner, ref_id`

func scanIdempotency(r Row) (*idempotency.Record, error) {
	var rec idempotency.Record
	err := r.Scan(&rec.WorkspaceID, &rec.Key, &rec.RequestHash, &rec.Status, &rec.ContentType, &rec.Body,
		&rec.CreatedAt, &rec.CompletedAt, &rec.Owner, &rec.RefID)
	return &rec, err
}

// ReserveIdempotencyKey reserves r's key unless a record exists that res
// keeps, which it returns instead. It also deletes a batch of expired keys
// of any workspace. Reservations of one key take turns (Conn.Lock), so
// that of two at once the second finds the first's record.
func (s *Store) ReserveIdempotencyKey(ctx context.Context, r *idempotency.Record, res idempotency.Reservation) (*idempotency.Record, error) {
	var out *idempotency.Record
	err := s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		out = nil
		if err := tx.Lock(ctx, "idempotency/"+r.WorkspaceID+"/"+r.Key); err != nil {
			return err
		}
		expired := tx.Now.Add(-res.TTL)
		existing, err := scanIdempotency(tx.QueryRow(ctx, `SELECT `+idempotencyCols+` FROM idempotency_keys
			WHERE workspace_id = ? AND key = ?`, r.WorkspaceID, r.Key))
		switch {
		case errors.Is(err, ErrNoRows):
		case err != nil:
			return err
		case !existing.CreatedAt.After(expired):
		case existing.Completed():
			out = existing
			return nil
		default:
			gone, err := reservationGone(ctx, tx, existing, res)
			if err != nil {
				return err
			}
			if !gone {
				out = existing
				return nil
			}
			if existing.RefID != "" {
				existing.Orphaned = true
				out = existing
				return nil
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM idempotency_keys WHERE (workspace_id, key) IN
			(SELECT workspace_id, key FROM idempotency_keys WHERE created_at <= ? LIMIT ?`+s.d.skipLocked()+`)`,
			expired, pruneIdempotencyBatch); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM idempotency_keys WHERE workspace_id = ? AND key = ?`,
			r.WorkspaceID, r.Key); err != nil {
			return err
		}
		r.Status, r.ContentType, r.Body, r.CreatedAt, r.CompletedAt = 0, "", nil, tx.Now, nil
		r.Owner, r.RefID, r.Orphaned = res.Owner, "", false
		_, err = tx.Exec(ctx, `INSERT INTO idempotency_keys (workspace_id, key, request_hash, created_at, owner)
			VALUES (?, ?, ?, ?, ?)`, r.WorkspaceID, r.Key, r.RequestHash, r.CreatedAt, r.Owner)
		return err
	})
	return out, err
}

// reservationGone reports whether the in-progress record rec is no longer
// held: its owner's lease has lapsed (or it has none), or, when it names no
// owner, it is older than res.Abandoned. A record still held gets its
// HeldUntil.
func reservationGone(ctx context.Context, tx *Tx, rec *idempotency.Record, res idempotency.Reservation) (bool, error) {
	var until time.Time
	if rec.Owner == "" {
		if res.Abandoned <= 0 {
			return false, nil
		}
		until = rec.CreatedAt.Add(res.Abandoned)
	} else {
		err := tx.QueryRow(ctx, `SELECT lease_until FROM idempotency_owners WHERE id = ?`, rec.Owner).Scan(&until)
		if errors.Is(err, ErrNoRows) {
			return true, nil
		} else if err != nil {
			return false, err
		}
	}
	if !until.After(tx.Now) {
		return true, nil
	}
	rec.HeldUntil = until
	return false, nil
}

// RenewIdempotencyOwner sets owner's lease to end lease from now. It also
// deletes owners whose lease lapsed more than a key's TTL ago: no record
// they held is still kept.
func (s *Store) RenewIdempotencyOwner(ctx context.Context, owner string, lease time.Duration) error {
	return s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO idempotency_owners (id, lease_until) VALUES (?, ?)
			ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until`,
			owner, tx.Now.Add(lease)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM idempotency_owners WHERE lease_until <= ?`, tx.Now.Add(-idempotency.TTL))
		return err
	})
}

// ReleaseIdempotencyOwners ends the lease of every owner but except, and
// deletes the records in progress of the other owners whose work never
// committed; those whose work committed are orphaned by the lapsed lease.
func (s *Store) ReleaseIdempotencyOwners(ctx context.Context, except string) error {
	return s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE idempotency_owners SET lease_until = ? WHERE id <> ? AND lease_until > ?`,
			tx.Now, except, tx.Now); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM idempotency_keys
			WHERE status = 0 AND ref_id = '' AND owner <> '' AND owner <> ?`, except)
		return err
	})
}

// recordIdempotencyRef saves refID as the RefID of the reservation rec
// (idempotency.FromContext), if any, inside the transaction that writes
// the work; a reservation that already has one, or that is no longer in
// progress, is left as it is.
func recordIdempotencyRef(ctx context.Context, tx *Tx, rec *idempotency.Record, refID string) error {
	if rec == nil || rec.CreatedAt.IsZero() {
		return nil
	}
	_, err := tx.Exec(ctx, `UPDATE idempotency_keys SET ref_id = ?
		WHERE workspace_id = ? AND key = ? AND created_at = ? AND status = 0 AND ref_id = ''`,
		refID, rec.WorkspaceID, rec.Key, rec.CreatedAt)
	return err
}

// CompleteIdempotencyKey saves the response of the reservation r.
func (s *Store) CompleteIdempotencyKey(ctx context.Context, r *idempotency.Record) error {
	body := r.Body
	if body == nil {
		body = []byte{}
	}
	var now time.Time
	err := s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		n, err := tx.Exec(ctx, `UPDATE idempotency_keys SET status = ?, content_type = ?, body = ?, completed_at = ?
			WHERE workspace_id = ? AND key = ? AND created_at = ? AND status = 0`,
			r.Status, r.ContentType, body, tx.Now, r.WorkspaceID, r.Key, r.CreatedAt)
		if err != nil {
			return err
		} else if n == 0 {
			return canvas.NotFound("idempotency key reservation")
		}
		now = tx.Now
		return nil
	})
	if err != nil {
		return err
	}
	r.CompletedAt = &now
	return nil
}

// ReleaseIdempotencyKey deletes the reservation r if it is still in
// progress.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, r *idempotency.Record) error {
	return s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM idempotency_keys WHERE workspace_id = ? AND key = ? AND created_at = ? AND status = 0`,
			r.WorkspaceID, r.Key, r.CreatedAt)
		return err
	})
}
