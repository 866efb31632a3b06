package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/idempotency"
)

// Compile-time check that DB keeps idempotency keys.
var _ idempotency.Store = (*DB)(nil)

// pruneIdempotencyBatch bounds how many expired keys one reservation
// deletes, so that the table does not grow without bound and no single
// request pays for a large clean-up.
const pruneIdempotencyBatch = 100

const idempotencyCols = `workspace_id, key, request_hash, status, content_type, body, created_at, completed_at`

func scanIdempotency(r interface{ Scan(...any) error }) (*idempotency.Record, error) {
	var rec idempotency.Record
	err := r.Scan(&rec.WorkspaceID, &rec.Key, &rec.RequestHash, &rec.Status, &rec.ContentType, &rec.Body,
		timeCol{&rec.CreatedAt}, nullTimeCol{&rec.CompletedAt})
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
	case !existing.Completed() && res.Abandoned > 0 && !existing.CreatedAt.After(tx.now.Add(-res.Abandoned)):
	default:
		return existing, nil
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
	if _, err := tx.exec(ctx, `INSERT INTO idempotency_keys (workspace_id, key, request_hash, created_at)
		VALUES (?, ?, ?, ?)`, r.WorkspaceID, r.Key, r.RequestHash, formatTime(r.CreatedAt)); err != nil {
		return nil, translate(err)
	}
	return nil, tx.Commit()
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
