package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// Compile-time check that DB implements the delivery log.
var _ webhook.LogStore = (*DB)(nil)

// deliveryCols are the columns scanDelivery reads, in order.
const deliveryCols = `seq, id, workspace_id, application_id, event_type, url, status, attempt_count,
	last_error, event, created_at, updated_at`

func scanDelivery(r interface{ Scan(...any) error }) (*webhook.LoggedDelivery, error) {
	var d webhook.LoggedDelivery
	var app, lastErr sql.NullString
	err := r.Scan(&d.Seq, &d.ID, &d.WorkspaceID, &app, &d.EventType, &d.URL, &d.Status, &d.AttemptCount,
		&lastErr, rawCol{&d.Event}, timeCol{&d.CreatedAt}, timeCol{&d.UpdatedAt})
	if app.Valid {
		d.ApplicationID = &app.String
	}
	if lastErr.Valid {
		d.LastError = &lastErr.String
	}
	return &d, err
}

// CreateDeliveries writes every delivery, its log row and its job, in one
// transaction; see insertDelivery.
func (db *DB) CreateDeliveries(ctx context.Context, ds []webhook.Outgoing) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := insertDeliveries(ctx, tx, ds); err != nil {
		return err
	}
	return tx.Commit()
}

// insertDeliveries writes every delivery of ds inside tx; see
// insertDelivery.
func insertDeliveries(ctx context.Context, tx *Tx, ds []webhook.Outgoing) error {
	for _, o := range ds {
		if err := insertDelivery(ctx, tx, o); err != nil {
			return err
		}
	}
	return nil
}

// qInsertDelivery inserts a delivery's log row; it is prepared at Open.
const qInsertDelivery = `INSERT INTO webhook_deliveries (id, workspace_id, application_id, event_type, url, status,
	attempt_count, payload, event, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?)`

// insertDelivery writes, inside tx, o's log row as given, status pending,
// and o's job (see insertJob) as a job of the delivery, so that the row
// ends with it. A delivery without an id or a job, or whose job is of
// another workspace, is VALIDATION; an id already in the log is CONFLICT.
func insertDelivery(ctx context.Context, tx *Tx, o webhook.Outgoing) error {
	d := o.Delivery
	if d.ID == "" || o.Job == nil {
		return canvas.Invalid("A delivery needs an id and a job.", canvas.Detail{Path: "/delivery", Message: "incomplete"})
	}
	if o.Job.WorkspaceID != d.WorkspaceID {
		return canvas.Invalid("A delivery's job belongs to the delivery's workspace.",
			canvas.Detail{Path: "/job/workspaceId", Message: "not the delivery's"})
	}
	var app *string
	if d.ApplicationID != "" {
		app = &d.ApplicationID
	}
	now := formatTime(tx.now)
	_, err := tx.exec(ctx, qInsertDelivery,
		d.ID, d.WorkspaceID, nullString(app), d.EventType, d.URL, string(d.Payload), string(d.Event), now, now)
	if err != nil {
		return translate(err)
	}
	return insertJobOf(ctx, tx, o.Job, d.ID)
}

// RecordAttempt appends the outcome's attempt to the delivery and sets its
// status and last error, in one transaction.
func (db *DB) RecordAttempt(ctx context.Context, o webhook.AttemptOutcome) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	found, err := recordAttempt(ctx, tx, o)
	if err != nil {
		return err
	}
	if !found {
		return canvas.Errorf(canvas.ENOTFOUND, "Delivery not found.")
	}
	return tx.Commit()
}

// RecordAttempts applies every outcome in order in one transaction,
// skipping those of unknown deliveries.
func (db *DB) RecordAttempts(ctx context.Context, os []webhook.AttemptOutcome) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, o := range os {
		if _, err := recordAttempt(ctx, tx, o); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Statements of recordAttempt, prepared once.
const (
	qRecordDelivery = `UPDATE webhook_deliveries SET status = ?, last_error = ?, attempt_count = attempt_count + ?,
		updated_at = ? WHERE id = ? AND workspace_id = ? RETURNING attempt_count`
	qInsertAttempt = `INSERT INTO webhook_attempts (delivery_id, number, at, status_code, latency_ms,
		error, response_body) VALUES (?, ?, ?, ?, ?, ?, ?)`
)

// recordAttempt applies one outcome inside tx and reports whether the
// delivery exists.
func recordAttempt(ctx context.Context, tx *Tx, o webhook.AttemptOutcome) (bool, error) {
	var lastErr *string
	if o.LastError != "" {
		lastErr = &o.LastError
	}
	inc := 0
	if o.Attempt != nil {
		inc = 1
	}
	var number int
	err := tx.queryRow(ctx, qRecordDelivery, o.Status, nullString(lastErr), inc, formatTime(tx.now),
		o.DeliveryID, o.WorkspaceID).Scan(&number)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, translate(err)
	}
	if a := o.Attempt; a != nil {
		var status any
		if a.StatusCode != nil {
			status = *a.StatusCode
		}
		if _, err := tx.exec(ctx, qInsertAttempt, o.DeliveryID, number, formatTime(a.At), status,
			a.LatencyMs, nullString(a.Error), a.ResponseBody); err != nil {
			return false, translate(err)
		}
	}
	return true, nil
}

// ListDeliveries returns one page of the workspace's delivery log, newest
// first.
func (db *DB) ListDeliveries(ctx context.Context, f webhook.DeliveryFilter) (*webhook.DeliveryPage, error) {
	where := `workspace_id = ?`
	args := []any{f.WorkspaceID}
	for _, c := range []struct{ col, v string }{
		{"application_id", f.ApplicationID}, {"status", f.Status}, {"event_type", f.EventType},
	} {
		if c.v != "" {
			where += ` AND ` + c.col + ` = ?`
			args = append(args, c.v)
		}
	}
	items, total, err := listPage(ctx, db, listQuery{cols: deliveryCols, from: `webhook_deliveries`, where: where, args: args,
		order: `seq DESC`, limit: f.Limit, offset: f.Offset}, func(r *sql.Rows) (*webhook.LoggedDelivery, error) { return scanDelivery(r) })
	if err != nil {
		return nil, err
	}
	return &webhook.DeliveryPage{Items: items, Total: total}, nil
}

// GetDelivery returns a delivery of the workspace with its attempts, oldest
// first.
func (db *DB) GetDelivery(ctx context.Context, workspaceID, id string) (*webhook.LoggedDelivery, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	return getDelivery(ctx, tx, workspaceID, id)
}

func getDelivery(ctx context.Context, tx *Tx, workspaceID, id string) (*webhook.LoggedDelivery, error) {
	d, err := scanDelivery(tx.queryRow(ctx, `SELECT `+deliveryCols+` FROM webhook_deliveries
		WHERE id = ? AND workspace_id = ?`, id, workspaceID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, canvas.Errorf(canvas.ENOTFOUND, "Delivery not found.")
	}
	if err != nil {
		return nil, err
	}
	rows, err := tx.query(ctx, `SELECT number, at, status_code, latency_ms, error, response_body
		FROM webhook_attempts WHERE delivery_id = ? ORDER BY number`, id)
	d.Attempts, err = rowsOf(rows, err, func(r *sql.Rows) (webhook.LoggedAttempt, error) {
		var a webhook.LoggedAttempt
		var status sql.NullInt64
		var msg sql.NullString
		err := r.Scan(&a.Number, timeCol{&a.At}, &status, &a.LatencyMs, &msg, &a.ResponseBody)
		if status.Valid {
			code := int(status.Int64)
			a.StatusCode = &code
		}
		if msg.Valid {
			a.Error = &msg.String
		}
		return a, err
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// RequeueDelivery writes the job p.Job makes from the delivery's stored
// payload as a job of the delivery, and puts the delivery back to pending,
// in one transaction.
func (db *DB) RequeueDelivery(ctx context.Context, p webhook.RequeueDeliveryParams) (*webhook.LoggedDelivery, error) {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var payload string
	err = tx.queryRow(ctx, `SELECT payload FROM webhook_deliveries WHERE id = ? AND workspace_id = ?`,
		p.DeliveryID, p.WorkspaceID).Scan(&payload)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, canvas.Errorf(canvas.ENOTFOUND, "Delivery not found.")
	}
	if err != nil {
		return nil, err
	}
	job := p.Job(json.RawMessage(payload))
	if job == nil || job.WorkspaceID != p.WorkspaceID {
		return nil, canvas.Invalid("A redelivery needs a job of the delivery's workspace.",
			canvas.Detail{Path: "/job", Message: "missing or of another workspace"})
	}
	if err := insertJobOf(ctx, tx, job, p.DeliveryID); err != nil {
		return nil, err
	}
	if _, err := tx.exec(ctx, `UPDATE webhook_deliveries SET status = 'pending', updated_at = ? WHERE id = ?`,
		formatTime(tx.now), p.DeliveryID); err != nil {
		return nil, err
	}
	d, err := getDelivery(ctx, tx, p.WorkspaceID, p.DeliveryID)
	if err != nil {
		return nil, err
	}
	return d, tx.Commit()
}
