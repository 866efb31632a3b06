package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

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

func scanIdempotency(r interface{ Scan(...any) error }) (*idempotency.Record, error) {
	var rec idempotency.Record
	err := r.Scan(&rec.WorkspaceID, &rec.Key, &rec.RequestHash, &rec.Status, &rec.ContentType, &rec.Body,
		timeCol{&rec.CreatedAt}, nullTimeCol{&rec.CompletedAt}, &rec.Owner, &rec.RefID)
	return &rec, err
}

// ReserveIdempotencyKey reserves r's key unless a record exists that res
// keeps, which it returns instead. It also deletes a batch of expired keys
// of any workspace.
func (db *DB) ReserveIdempotencyKey(ctx context.Context, r *idempotency.Record, res idempotency.Reservation) (*idempotency.Record, error) {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	expired := tx.now.Add(-res.TTL)
	existing, err := scanIdempotency(tx.queryRow(ctx, `SELECT `+idempotencyCols+` FROM idempotency_keys
		WHERE workspace_id = ? AND key = ?`, r.WorkspaceID, r.Key))
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, err
	case !existing.CreatedAt.After(expired):
	case existing.Completed():
		return existing, nil
	default:
		gone, err := reservationGone(ctx, tx, existing, res)
		if err != nil {
			return nil, err
		}
		if !gone {
			return existing, nil
		}
		if existing.RefID != "" {
			existing.Orphaned = true
			return existing, nil
		}
	}
	if _, err := tx.exec(ctx, `DELETE FROM idempotency_keys WHERE (workspace_id, key) IN
		(SELECT workspace_id, key FROM idempotency_keys WHERE created_at <= ? LIMIT ?)`,
		formatTime(expired), pruneIdempotencyBatch); err != nil {
		return nil, err
	}
	if _, err := tx.exec(ctx, `DELETE FROM idempotency_keys WHERE workspace_id = ? AND key = ?`,
		r.WorkspaceID, r.Key); err != nil {
		return nil, err
	}
	r.Status, r.ContentType, r.Body, r.CreatedAt, r.CompletedAt = 0, "", nil, tx.now, nil
	r.Owner, r.RefID, r.Orphaned = res.Owner, "", false
	if _, err := tx.exec(ctx, `INSERT INTO idempotency_keys (workspace_id, key, request_hash, created_at, owner)
		VALUES (?, ?, ?, ?, ?)`, r.WorkspaceID, r.Key, r.RequestHash, formatTime(r.CreatedAt), r.Owner); err != nil {
		return nil, translate(err)
	}
	return nil, tx.Commit()
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
		err := tx.queryRow(ctx, `SELECT lease_until FROM idempotency_owners WHERE id = ?`, rec.Owner).Scan(timeCol{&until})
		if errors.Is(err, sql.ErrNoRows) {
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
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.exec(ctx, `INSERT INTO idempotency_owners (id, lease_until) VALUES (?, ?)
		ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until`,
		owner, formatTime(tx.now.Add(lease))); err != nil {
		return err
	}
	if _, err := tx.exec(ctx, `DELETE FROM idempotency_owners WHERE lease_until <= ?`,
		formatTime(tx.now.Add(-idempotency.TTL))); err != nil {
		return err
	}
	return tx.Commit()
}

// recordIdempotencyRef saves refID as the RefID of the reservation that
// ctx carries (idempotency.NewContext), if any, inside the transaction that
// writes the work; a reservation that already has one, or that is no
// longer in progress, is left as it is.
func recordIdempotencyRef(ctx context.Context, tx *Tx, rec *idempotency.Record, refID string) error {
	if rec == nil || rec.CreatedAt.IsZero() {
		return nil
	}
	_, err := tx.exec(ctx, `UPDATE idempotency_keys SET ref_id = ?
		WHERE workspace_id = ? AND key = ? AND created_at = ? AND status = 0 AND ref_id = ''`,
		refID, rec.WorkspaceID, rec.Key, formatTime(rec.CreatedAt))
	return err
}

// CompleteIdempotencyKey saves the response of the reservation r.
func (db *DB) CompleteIdempotencyKey(ctx context.Context, r *idempotency.Record) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	body := r.Body
	if body == nil {
		body = []byte{}
	}
	res, err := tx.exec(ctx, `UPDATE idempotency_keys SET status = ?, content_type = ?, body = ?, completed_at = ?
		WHERE workspace_id = ? AND key = ? AND created_at = ? AND status = 0`,
		r.Status, r.ContentType, body, formatTime(tx.now), r.WorkspaceID, r.Key, formatTime(r.CreatedAt))
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return canvas.NotFound("idempotency key reservation")
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	now := tx.now
	r.CompletedAt = &now
	return nil
}

// ReleaseIdempotencyKey deletes the reservation r if it is still in
// progress.
func (db *DB) ReleaseIdempotencyKey(ctx context.Context, r *idempotency.Record) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.exec(ctx, `DELETE FROM idempotency_keys WHERE workspace_id = ? AND key = ? AND created_at = ? AND status = 0`,
		r.WorkspaceID, r.Key, formatTime(r.CreatedAt)); err != nil {
		return err
	}
	return tx.Commit()
}
