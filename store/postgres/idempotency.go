package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/idempotency"
)

// Compile-time check that DB keeps idempotency keys.
var _ idempotency.Store = (*DB)(nil)

// pruneIdempotencyBatch bounds how many expired keys one reservation
// deletes, so that the table does not grow without bound and no single
// request pays for a large clean-up.
const pruneIdempotencyBatch = 100

const idempotencyCols = `workspace_id, key, request_hash, status, content_type, body, created_at, completed_at,
	owner, ref_id`

func scanIdempotency(r scanner) (*idempotency.Record, error) {
	var rec idempotency.Record
	err := r.Scan(&rec.WorkspaceID, &rec.Key, &rec.RequestHash, &rec.Status, &rec.ContentType, &rec.Body,
		&rec.CreatedAt, &rec.CompletedAt, &rec.Owner, &rec.RefID)
	return &rec, err
}

// lockKey takes a transaction-scoped advisory lock on the text key: the
// check-then-write transactions of one key, in any processes, take turns.
func lockKey(ctx context.Context, tx *Tx, key string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, key)
	return err
}

// ReserveIdempotencyKey reserves r's key unless a record exists that res
// keeps, which it returns instead. It also deletes a batch of expired keys
// of any workspace. Reservations of one key take turns (an advisory lock),
// so that of two at once the second finds the first's record.
func (db *DB) ReserveIdempotencyKey(ctx context.Context, r *idempotency.Record, res idempotency.Reservation) (*idempotency.Record, error) {
	var out *idempotency.Record
	err := db.write(ctx, func(tx *Tx) error {
		out = nil
		if err := lockKey(ctx, tx, "idempotency/"+r.WorkspaceID+"/"+r.Key); err != nil {
			return err
		}
		expired := tx.now.Add(-res.TTL)
		existing, err := scanIdempotency(tx.QueryRow(ctx, `SELECT `+idempotencyCols+` FROM idempotency_keys
			WHERE workspace_id = $1 AND key = $2`, r.WorkspaceID, r.Key))
		switch {
		case errors.Is(err, pgx.ErrNoRows):
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
			(SELECT workspace_id, key FROM idempotency_keys WHERE created_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
			expired, pruneIdempotencyBatch); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM idempotency_keys WHERE workspace_id = $1 AND key = $2`,
			r.WorkspaceID, r.Key); err != nil {
			return err
		}
		r.Status, r.ContentType, r.Body, r.CreatedAt, r.CompletedAt = 0, "", nil, tx.now, nil
		r.Owner, r.RefID, r.Orphaned = res.Owner, "", false
		_, err = tx.Exec(ctx, `INSERT INTO idempotency_keys (workspace_id, key, request_hash, created_at, owner)
			VALUES ($1, $2, $3, $4, $5)`, r.WorkspaceID, r.Key, r.RequestHash, r.CreatedAt, r.Owner)
		return translate(err)
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
		err := tx.QueryRow(ctx, `SELECT lease_until FROM idempotency_owners WHERE id = $1`, rec.Owner).Scan(&until)
		if errors.Is(err, pgx.ErrNoRows) {
			return true, nil
		} else if err != nil {
			return false, err
		}
	}
	if !until.After(tx.now) {
		return true, nil
	}
	rec.HeldUntil = until
	return false, nil
}

// RenewIdempotencyOwner sets owner's lease to end lease from now. It also
// deletes owners whose lease lapsed more than a key's TTL ago: no record
// they held is still kept.
func (db *DB) RenewIdempotencyOwner(ctx context.Context, owner string, lease time.Duration) error {
	return db.write(ctx, func(tx *Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO idempotency_owners (id, lease_until) VALUES ($1, $2)
			ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until`,
			owner, instant(tx.now.Add(lease))); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM idempotency_owners WHERE lease_until <= $1`, tx.now.Add(-idempotency.TTL))
		return err
	})
}

// recordIdempotencyRef saves refID as the RefID of the reservation that
// ctx carries (idempotency.NewContext), if any, inside the transaction that
// writes the work; a reservation that already has one, or that is no
// longer in progress, is left as it is.
func recordIdempotencyRef(ctx context.Context, tx *Tx, rec *idempotency.Record, refID string) error {
	if rec == nil || rec.CreatedAt.IsZero() {
		return nil
	}
	_, err := tx.Exec(ctx, `UPDATE idempotency_keys SET ref_id = $1
		WHERE workspace_id = $2 AND key = $3 AND created_at = $4 AND status = 0 AND ref_id = ''`,
		refID, rec.WorkspaceID, rec.Key, instant(rec.CreatedAt))
	return err
}

// CompleteIdempotencyKey saves the response of the reservation r.
func (db *DB) CompleteIdempotencyKey(ctx context.Context, r *idempotency.Record) error {
	body := r.Body
	if body == nil {
		body = []byte{}
	}
	var now time.Time
	err := db.write(ctx, func(tx *Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE idempotency_keys SET status = $1, content_type = $2, body = $3, completed_at = $4
			WHERE workspace_id = $5 AND key = $6 AND created_at = $7 AND status = 0`,
			r.Status, r.ContentType, body, tx.now, r.WorkspaceID, r.Key, instant(r.CreatedAt))
		if err != nil {
			return err
		} else if tag.RowsAffected() == 0 {
			return canvas.NotFound("idempotency key reservation")
		}
		now = tx.now
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
func (db *DB) ReleaseIdempotencyKey(ctx context.Context, r *idempotency.Record) error {
	return db.write(ctx, func(tx *Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM idempotency_keys WHERE workspace_id = $1 AND key = $2 AND created_at = $3 AND status = 0`,
			r.WorkspaceID, r.Key, instant(r.CreatedAt))
		return err
	})
}
