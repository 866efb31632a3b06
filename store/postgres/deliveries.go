package postgres

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// Compile-time check that DB implements the delivery log.
var _ webhook.LogStore = (*DB)(nil)

// deliveryCols are the columns scanDelivery reads, in order.
const deliveryCols = `seq, id, workspace_id, application_id, event_type, url, status, attempt_count,
	last_error, event, created_at, updated_at`

func scanDelivery(r scanner) (*webhook.LoggedDelivery, error) {
	var d webhook.LoggedDelivery
	err := r.Scan(&d.Seq, &d.ID, &d.WorkspaceID, &d.ApplicationID, &d.EventType, &d.URL, &d.Status, &d.AttemptCount,
		&d.LastError, rawCol{&d.Event}, &d.CreatedAt, &d.UpdatedAt)
	return &d, err
}

// CreateDeliveries writes every delivery, its log row and its job, in one
// transaction; see insertDelivery.
func (db *DB) CreateDeliveries(ctx context.Context, ds []webhook.Outgoing) error {
	return db.write(ctx, func(tx *Tx) error { return insertDeliveries(ctx, tx, ds) })
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
	var app any
	if d.ApplicationID != "" {
		app = d.ApplicationID
	}
	if _, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries (id, workspace_id, application_id, event_type, url, status,
		attempt_count, payload, event, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $7, $8, $8)`,
		d.ID, d.WorkspaceID, app, d.EventType, d.URL, string(d.Payload), string(d.Event), tx.now); err != nil {
		return translate(err)
	}
	return insertJobOf(ctx, tx, o.Job, d.ID)
}

// RecordAttempt appends the outcome's attempt to the delivery and sets its
// status and last error, in one transaction.
func (db *DB) RecordAttempt(ctx context.Context, o webhook.AttemptOutcome) error {
	return db.write(ctx, func(tx *Tx) error {
		found, err := recordAttempt(ctx, tx, o)
		if err != nil {
			return err
		} else if !found {
			return canvas.Errorf(canvas.ENOTFOUND, "Delivery not found.")
		}
		return nil
	})
}

// RecordAttempts applies every outcome in order in one transaction,
// skipping those of unknown deliveries.
func (db *DB) RecordAttempts(ctx context.Context, os []webhook.AttemptOutcome) error {
	return db.write(ctx, func(tx *Tx) error {
		for _, o := range os {
			if _, err := recordAttempt(ctx, tx, o); err != nil {
				return err
			}
		}
		return nil
	})
}

// Statements of recordAttempt. The delivery's UPDATE locks its row, so
// that attempts recorded at once (by replicas that both sent it after a
// lease expired) are numbered one after the other.
const (
	qRecordDelivery = `UPDATE webhook_deliveries SET status = $1, last_error = $2, attempt_count = attempt_count + $3,
		updated_at = $4 WHERE id = $5 AND workspace_id = $6 RETURNING attempt_count`
	qInsertAttempt = `INSERT INTO webhook_attempts (delivery_id, number, at, status_code, latency_ms,
		error, response_body) VALUES ($1, $2, $3, $4, $5, $6, $7)`
)

// recordAttempt applies one outcome inside tx and reports whether the
// delivery exists.
func recordAttempt(ctx context.Context, tx *Tx, o webhook.AttemptOutcome) (bool, error) {
	var lastErr any
	if o.LastError != "" {
		lastErr = o.LastError
	}
	inc := 0
	if o.Attempt != nil {
		inc = 1
	}
	var number int
	err := tx.QueryRow(ctx, qRecordDelivery, o.Status, lastErr, inc, tx.now, o.DeliveryID, o.WorkspaceID).Scan(&number)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	} else if err != nil {
		return false, translate(err)
	}
	if a := o.Attempt; a != nil {
		if _, err := tx.Exec(ctx, qInsertAttempt, o.DeliveryID, number, instant(a.At), a.StatusCode,
			a.LatencyMs, a.Error, a.ResponseBody); err != nil {
			return false, translate(err)
		}
	}
	return true, nil
}

// deliveryFilter adds f's conditions to where, for the columns of the
// table aliased prefix.
func deliveryFilter(p *params, prefix string, f webhook.DeliveryFilter) string {
	where := prefix + `workspace_id = ` + p.add(f.WorkspaceID)
	for _, c := range []struct{ col, v string }{
		{"application_id", f.ApplicationID}, {"status", f.Status}, {"event_type", f.EventType},
	} {
		if c.v != "" {
			where += ` AND ` + prefix + c.col + ` = ` + p.add(c.v)
		}
	}
	return where
}

// deliveryPage reads the count and one page, newest first, of the
// deliveries where selects, in one snapshot.
func (db *DB) deliveryPage(ctx context.Context, from, where string, p params, f webhook.DeliveryFilter) (*webhook.DeliveryPage, error) {
	items, total, err := listPage(ctx, db, listQuery{cols: deliveryCols, from: from, where: where, args: p,
		order: `seq DESC`, limit: f.Limit, offset: f.Offset}, func(r pgx.Rows) (*webhook.LoggedDelivery, error) { return scanDelivery(r) })
	if err != nil {
		return nil, err
	}
	return &webhook.DeliveryPage{Items: items, Total: total}, nil
}

// ListDeliveries returns one page of the workspace's delivery log, newest
// first.
func (db *DB) ListDeliveries(ctx context.Context, f webhook.DeliveryFilter) (*webhook.DeliveryPage, error) {
	var p params
	where := deliveryFilter(&p, "", f)
	return db.deliveryPage(ctx, "webhook_deliveries", where, p, f)
}

// GetDelivery returns a delivery of the workspace with its attempts, oldest
// first.
func (db *DB) GetDelivery(ctx context.Context, workspaceID, id string) (*webhook.LoggedDelivery, error) {
	var d *webhook.LoggedDelivery
	err := db.read(ctx, func(tx *Tx) error {
		var err error
		d, err = getDelivery(ctx, tx, workspaceID, id)
		return err
	})
	return d, err
}

func getDelivery(ctx context.Context, tx *Tx, workspaceID, id string) (*webhook.LoggedDelivery, error) {
	d, err := scanDelivery(tx.QueryRow(ctx, `SELECT `+deliveryCols+` FROM webhook_deliveries
		WHERE id = $1 AND workspace_id = $2`, id, workspaceID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, canvas.Errorf(canvas.ENOTFOUND, "Delivery not found.")
	} else if err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, `SELECT number, at, status_code, latency_ms, error, response_body
		FROM webhook_attempts WHERE delivery_id = $1 ORDER BY number`, id)
	d.Attempts, err = rowsOf(rows, err, func(r pgx.Rows) (webhook.LoggedAttempt, error) {
		var a webhook.LoggedAttempt
		return a, r.Scan(&a.Number, &a.At, &a.StatusCode, &a.LatencyMs, &a.Error, &a.ResponseBody)
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
	var d *webhook.LoggedDelivery
	err := db.write(ctx, func(tx *Tx) error {
		var payload string
		err := tx.QueryRow(ctx, `SELECT payload FROM webhook_deliveries WHERE id = $1 AND workspace_id = $2 FOR UPDATE`,
			p.DeliveryID, p.WorkspaceID).Scan(&payload)
		if errors.Is(err, pgx.ErrNoRows) {
			return canvas.Errorf(canvas.ENOTFOUND, "Delivery not found.")
		} else if err != nil {
			return err
		}
		job := p.Job(json.RawMessage(payload))
		if job == nil || job.WorkspaceID != p.WorkspaceID {
			return canvas.Invalid("A redelivery needs a job of the delivery's workspace.",
				canvas.Detail{Path: "/job", Message: "missing or of another workspace"})
		}
		if err := insertJobOf(ctx, tx, job, p.DeliveryID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET status = 'pending', updated_at = $1 WHERE id = $2`,
			tx.now, p.DeliveryID); err != nil {
			return err
		}
		d, err = getDelivery(ctx, tx, p.WorkspaceID, p.DeliveryID)
		return err
	})
	return d, err
}
