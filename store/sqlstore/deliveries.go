package sqlstore

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// Compile-time check that Store implements the delivery log and what a
// Notifier needs.
var (
	_ webhook.LogStore      = (*Store)(nil)
	_ webhook.NotifierStore = (*Store)(nil)
)

// deliveryCols are the columns scanDelivery reads, in order.
const deliveryCols = `seq, id, workspace_id, application_id, event_type, url, status, attempt_count,
	last_error, event, created_at, updated_at`

func scanDelivery(r Row) (*webhook.LoggedDelivery, error) {
	var d webhook.LoggedDelivery
	err := r.Scan(&d.Seq, &d.ID, &d.WorkspaceID, &d.ApplicationID, &d.EventType, &d.URL, &d.Status, &d.AttemptCount,
		&d.LastError, rawCol{&d.Event}, &d.CreatedAt, &d.UpdatedAt)
	return &d, err
}

// CreateDeliveries writes every delivery, its log row and its job, in one
// transaction; see insertDelivery.
func (s *Store) CreateDeliveries(ctx context.Context, ds []webhook.Outgoing) error {
	return s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error { return s.insertDeliveries(ctx, tx, ds) })
}

// insertDeliveries writes every delivery of ds inside tx; see
// insertDelivery.
func (s *Store) insertDeliveries(ctx context.Context, tx *Tx, ds []webhook.Outgoing) error {
	for _, o := range ds {
		if err := s.insertDelivery(ctx, tx, o); err != nil {
			return err
		}
	}
	return nil
}

// QInsertDelivery inserts a delivery's log row; the SQLite driver
// prepares it at Open.
const QInsertDelivery = `INSERT INTO webhook_deliveries (id, workspace_id, application_id, event_type, url, status,
	attempt_count, payload, event, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?)`

// insertDelivery writes, inside tx, o's log row as given, status pending,
// and o's job (see insertJob) as a job of the delivery, so that the row
// ends with it. A delivery without an id or a job, or whose job is of
// another workspace, is VALIDATION; an id already in the log is CONFLICT.
func (s *Store) insertDelivery(ctx context.Context, tx *Tx, o webhook.Outgoing) error {
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
	if _, err := tx.Exec(ctx, QInsertDelivery, d.ID, d.WorkspaceID, app, d.EventType, d.URL,
		string(d.Payload), string(d.Event), tx.Now, tx.Now); err != nil {
		return err
	}
	return s.insertJobOf(ctx, tx, o.Job, d.ID)
}

// RecordAttempt appends the outcome's attempt to the delivery and sets its
// status and last error, in one transaction.
func (s *Store) RecordAttempt(ctx context.Context, o webhook.AttemptOutcome) error {
	return s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
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
func (s *Store) RecordAttempts(ctx context.Context, os []webhook.AttemptOutcome) error {
	return s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		for _, o := range os {
			if _, err := recordAttempt(ctx, tx, o); err != nil {
				return err
			}
		}
		return nil
	})
}

// Statements of recordAttempt; the SQLite driver prepares them at Open.
// The delivery's UPDATE locks its row, so that attempts recorded at once
// (by replicas that both sent it after a lease expired) are numbered one
// after the other.
const (
	QRecordDelivery = `UPDATE webhook_deliveries SET status = ?, last_error = ?, attempt_count = attempt_count + ?,
		updated_at = ? WHERE id = ? AND workspace_id = ? RETURNING attempt_count`
	QInsertAttempt = `INSERT INTO webhook_attempts (delivery_id, number, at, status_code, latency_ms,
		error, response_body) VALUES (?, ?, ?, ?, ?, ?, ?)`
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
	err := tx.QueryRow(ctx, QRecordDelivery, o.Status, lastErr, inc, tx.Now, o.DeliveryID, o.WorkspaceID).Scan(&number)
	if errors.Is(err, ErrNoRows) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if a := o.Attempt; a != nil {
		var status any
		if a.StatusCode != nil {
			status = *a.StatusCode
		}
		if _, err := tx.Exec(ctx, QInsertAttempt, o.DeliveryID, number, a.At, status,
			a.LatencyMs, nullString(a.Error), a.ResponseBody); err != nil {
			return false, err
		}
	}
	return true, nil
}

// deliveryFilter is the SQL condition of f on the columns of the table
// aliased prefix; its arguments are appended to args.
func deliveryFilter(args *[]any, prefix string, f webhook.DeliveryFilter) string {
	where := prefix + `workspace_id = ?`
	*args = append(*args, f.WorkspaceID)
	for _, c := range []struct{ col, v string }{
		{"application_id", f.ApplicationID}, {"status", f.Status}, {"event_type", f.EventType},
	} {
		if c.v != "" {
			where += ` AND ` + prefix + c.col + ` = ?`
			*args = append(*args, c.v)
		}
	}
	return where
}

// deliveryPage reads the count and one page, newest first, of the
// deliveries of from that where selects, in one snapshot.
func (s *Store) deliveryPage(ctx context.Context, from, where string, args []any, f webhook.DeliveryFilter) (*webhook.DeliveryPage, error) {
	items, total, err := listPage(ctx, s, listQuery{cols: deliveryCols, from: from, where: where, args: args,
		order: `seq DESC`, limit: f.Limit, offset: f.Offset}, func(r Rows) (*webhook.LoggedDelivery, error) { return scanDelivery(r) })
	if err != nil {
		return nil, err
	}
	return &webhook.DeliveryPage{Items: items, Total: total}, nil
}

// ListDeliveries returns one page of the workspace's delivery log, newest
// first.
func (s *Store) ListDeliveries(ctx context.Context, f webhook.DeliveryFilter) (*webhook.DeliveryPage, error) {
	var args []any
	where := deliveryFilter(&args, "", f)
	return s.deliveryPage(ctx, `webhook_deliveries`, where, args, f)
}

// GetDelivery returns a delivery of the workspace with its attempts, oldest
// first.
func (s *Store) GetDelivery(ctx context.Context, workspaceID, id string) (*webhook.LoggedDelivery, error) {
	var d *webhook.LoggedDelivery
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		var err error
		d, err = getDelivery(ctx, tx, workspaceID, id)
		return err
	})
	return d, err
}

func getDelivery(ctx context.Context, tx *Tx, workspaceID, id string) (*webhook.LoggedDelivery, error) {
	d, err := scanDelivery(tx.QueryRow(ctx, `SELECT `+deliveryCols+` FROM webhook_deliveries
		WHERE id = ? AND workspace_id = ?`, id, workspaceID))
	if errors.Is(err, ErrNoRows) {
		return nil, canvas.Errorf(canvas.ENOTFOUND, "Delivery not found.")
	} else if err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, `SELECT number, at, status_code, latency_ms, error, response_body
		FROM webhook_attempts WHERE delivery_id = ? ORDER BY number`, id)
	d.Attempts, err = RowsOf(rows, err, func(r Rows) (webhook.LoggedAttempt, error) {
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
// in one transaction; the delivery's row is locked meanwhile.
func (s *Store) RequeueDelivery(ctx context.Context, p webhook.RequeueDeliveryParams) (*webhook.LoggedDelivery, error) {
	var d *webhook.LoggedDelivery
	err := s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		var payload string
		err := tx.QueryRow(ctx, `SELECT payload FROM webhook_deliveries WHERE id = ? AND workspace_id = ?`+s.d.ForUpdate(),
			p.DeliveryID, p.WorkspaceID).Scan(&payload)
		if errors.Is(err, ErrNoRows) {
			return canvas.Errorf(canvas.ENOTFOUND, "Delivery not found.")
		} else if err != nil {
			return err
		}
		job := p.Job(json.RawMessage(payload))
		if job == nil || job.WorkspaceID != p.WorkspaceID {
			return canvas.Invalid("A redelivery needs a job of the delivery's workspace.",
				canvas.Detail{Path: "/job", Message: "missing or of another workspace"})
		}
		if err := s.insertJobOf(ctx, tx, job, p.DeliveryID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET status = 'pending', updated_at = ? WHERE id = ?`,
			tx.Now, p.DeliveryID); err != nil {
			return err
		}
		d, err = getDelivery(ctx, tx, p.WorkspaceID, p.DeliveryID)
		return err
	})
	return d, err
}
