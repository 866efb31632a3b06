package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// Compile-time check that DB implements the webhook package's stores.
var (
	_ webhook.ApplicationStore = (*DB)(nil)
	_ webhook.NotifierStore    = (*DB)(nil)
)

// applicationCols are the columns scanApplication reads, in order, from
// applications a; the last one tells whether a live secret exists at the
// time $1.
const applicationCols = `a.id, a.workspace_id, a.name, a.prompt_id, a.environment_name, a.events_enabled,
	a.events_url, a.events_headers, a.events_types, a.consecutive_failures, a.disabled_at, a.disabled_reason,
	a.created_by, a.created_at, a.updated_at,
	EXISTS (SELECT 1 FROM application_secrets s WHERE s.application_id = a.id AND (s.expires_at IS NULL OR s.expires_at > $1))`

func scanApplication(r scanner) (*webhook.Application, error) {
	var a webhook.Application
	err := r.Scan(&a.ID, &a.WorkspaceID, &a.Name, &a.PromptID, &a.EnvironmentName, &a.Events.Enabled,
		&a.Events.URL, jsonCol{&a.Events.Headers}, jsonCol{&a.Events.EventTypes}, &a.Events.ConsecutiveFailures,
		&a.Events.DisabledAt, &a.Events.DisabledReason, &a.CreatedBy, &a.CreatedAt, &a.UpdatedAt,
		&a.Events.HasSecret)
	if a.Events.Headers == nil {
		a.Events.Headers = []webhook.Header{}
	}
	if a.Events.EventTypes == nil {
		a.Events.EventTypes = []string{}
	}
	return &a, err
}

// CreateApplication inserts a and its first signing secret.
func (db *DB) CreateApplication(ctx context.Context, a *webhook.Application, secret string) error {
	headers, err := jsonText(orEmpty(a.Events.Headers))
	if err != nil {
		return err
	}
	types, err := jsonText(orEmpty(a.Events.EventTypes))
	if err != nil {
		return err
	}
	return db.write(ctx, func(tx *Tx) error {
		if a.ID == "" {
			a.ID = db.NewID()
		}
		a.CreatedAt, a.UpdatedAt = tx.now, tx.now
		if _, err := tx.Exec(ctx, `INSERT INTO applications (id, workspace_id, name, prompt_id, environment_name,
			events_enabled, events_url, events_headers, events_types, consecutive_failures, created_by, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 0, $10, $11, $11)`,
			a.ID, a.WorkspaceID, a.Name, nullString(a.PromptID), a.EnvironmentName, a.Events.Enabled, a.Events.URL,
			headers, types, a.CreatedBy, tx.now); err != nil {
			return translate(err)
		}
		return insertSecret(ctx, tx, a.ID, secret)
	})
}

func insertSecret(ctx context.Context, tx *Tx, applicationID, secret string) error {
	_, err := tx.Exec(ctx, `INSERT INTO application_secrets (id, application_id, value, created_at) VALUES ($1, $2, $3, $4)`,
		tx.db.NewID(), applicationID, secret, tx.now)
	return translate(err)
}

// GetApplication returns an application of the workspace.
func (db *DB) GetApplication(ctx context.Context, workspaceID, id string) (*webhook.Application, error) {
	return getApplication(ctx, db.pool, instant(db.Now()), workspaceID, id, "")
}

func getApplication(ctx context.Context, q querier, now any, workspaceID, id, lock string) (*webhook.Application, error) {
	a, err := scanApplication(q.QueryRow(ctx, `SELECT `+applicationCols+` FROM applications a
		WHERE a.workspace_id = $2 AND a.id = $3`+lock, now, workspaceID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, canvas.NotFound("application")
	}
	return a, err
}

// ListApplications returns the workspace's applications, oldest first; a
// canvasID keeps those of that canvas.
func (db *DB) ListApplications(ctx context.Context, workspaceID, canvasID string) ([]*webhook.Application, error) {
	q := `SELECT ` + applicationCols + ` FROM applications a WHERE a.workspace_id = $2`
	args := []any{instant(db.Now()), workspaceID}
	if canvasID != "" {
		q += ` AND a.prompt_id = $3`
		args = append(args, canvasID)
	}
	rows, err := db.pool.Query(ctx, q+` ORDER BY a.created_at, a.id`, args...)
	return rowsOf(rows, err, func(r pgx.Rows) (*webhook.Application, error) { return scanApplication(r) })
}

// UpdateApplication applies upd and returns the application. The row is
// locked while it is read and rewritten.
func (db *DB) UpdateApplication(ctx context.Context, workspaceID, id string, upd webhook.ApplicationUpdate) (*webhook.Application, error) {
	var out *webhook.Application
	err := db.write(ctx, func(tx *Tx) error {
		a, err := getApplication(ctx, tx, tx.now, workspaceID, id, ` FOR UPDATE OF a`)
		if err != nil {
			return err
		}
		if upd.Name != nil {
			a.Name = *upd.Name
		}
		if upd.PromptID != nil {
			a.PromptID = *upd.PromptID
		}
		if upd.EnvironmentName != nil {
			a.EnvironmentName = *upd.EnvironmentName
		}
		if upd.URL != nil {
			a.Events.URL = *upd.URL
		}
		if upd.Headers != nil {
			a.Events.Headers = orEmpty(*upd.Headers)
		}
		if upd.EventTypes != nil {
			a.Events.EventTypes = orEmpty(*upd.EventTypes)
		}
		if upd.Enabled != nil {
			if *upd.Enabled {
				a.Events.ConsecutiveFailures, a.Events.DisabledAt, a.Events.DisabledReason = 0, nil, nil
			}
			a.Events.Enabled = *upd.Enabled
		}
		headers, err := jsonText(a.Events.Headers)
		if err != nil {
			return err
		}
		types, err := jsonText(a.Events.EventTypes)
		if err != nil {
			return err
		}
		a.UpdatedAt = tx.now
		if _, err := tx.Exec(ctx, `UPDATE applications SET name = $1, prompt_id = $2, environment_name = $3,
			events_enabled = $4, events_url = $5, events_headers = $6, events_types = $7, consecutive_failures = $8,
			disabled_at = $9, disabled_reason = $10, updated_at = $11 WHERE id = $12`,
			a.Name, nullString(a.PromptID), a.EnvironmentName, a.Events.Enabled, a.Events.URL, headers, types,
			a.Events.ConsecutiveFailures, nullInstant(a.Events.DisabledAt), nullString(a.Events.DisabledReason),
			tx.now, id); err != nil {
			return translate(err)
		}
		out = a
		return nil
	})
	return out, err
}

// DeleteApplication removes the application and its secrets.
func (db *DB) DeleteApplication(ctx context.Context, workspaceID, id string) error {
	return db.write(ctx, func(tx *Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM application_secrets WHERE application_id IN
			(SELECT id FROM applications WHERE workspace_id = $1 AND id = $2)`, workspaceID, id); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM applications WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
		if err != nil {
			return translate(err)
		} else if tag.RowsAffected() == 0 {
			return canvas.NotFound("application")
		}
		return nil
	})
}

// RotateSecret adds p.Secret as the newest signing secret; the live ones
// expire at now+p.Overlap unless they expire sooner.
func (db *DB) RotateSecret(ctx context.Context, p webhook.RotateSecretParams) error {
	return db.write(ctx, func(tx *Tx) error {
		if _, err := getApplication(ctx, tx, tx.now, p.WorkspaceID, p.ApplicationID, ` FOR UPDATE OF a`); err != nil {
			return err
		}
		until := instant(tx.now.Add(p.Overlap))
		if _, err := tx.Exec(ctx, `UPDATE application_secrets SET expires_at = $1
			WHERE application_id = $2 AND (expires_at IS NULL OR expires_at > $1)`, until, p.ApplicationID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM application_secrets WHERE application_id = $1 AND expires_at <= $2`,
			p.ApplicationID, tx.now); err != nil {
			return err
		}
		if err := insertSecret(ctx, tx, p.ApplicationID, p.Secret); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE applications SET updated_at = $1 WHERE id = $2`, tx.now, p.ApplicationID)
		return err
	})
}

// SubscriptionTarget returns the application's subscription as it is now,
// with its live secrets, newest first.
func (db *DB) SubscriptionTarget(ctx context.Context, applicationID string) (*webhook.SubscriptionTarget, error) {
	var t *webhook.SubscriptionTarget
	err := db.read(ctx, func(tx *Tx) error {
		t = &webhook.SubscriptionTarget{ApplicationID: applicationID, Secrets: []webhook.Secret{}}
		err := tx.QueryRow(ctx, `SELECT events_enabled, consecutive_failures FROM applications WHERE id = $1`,
			applicationID).Scan(&t.Enabled, &t.ConsecutiveFailures)
		if errors.Is(err, pgx.ErrNoRows) {
			return canvas.NotFound("application")
		} else if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT value, created_at, expires_at FROM application_secrets
			WHERE application_id = $1 AND (expires_at IS NULL OR expires_at > $2) ORDER BY created_at DESC, id`,
			applicationID, tx.now)
		t.Secrets, err = rowsOf(rows, err, func(r pgx.Rows) (webhook.Secret, error) {
			var s webhook.Secret
			return s, r.Scan(&s.Value, &s.CreatedAt, &s.ExpiresAt)
		})
		return err
	})
	return t, err
}

// RecordSubscriptionOutcome resets the failure count after a success, or
// counts a final failure and, when disable is set, disables the
// subscription with reason. An unknown application is NOT_FOUND.
func (db *DB) RecordSubscriptionOutcome(ctx context.Context, applicationID string, succeeded, disable bool, reason string) error {
	return db.write(ctx, func(tx *Tx) error {
		var tag pgconn.CommandTag
		var err error
		switch {
		case succeeded:
			tag, err = tx.Exec(ctx, `UPDATE applications SET consecutive_failures = 0 WHERE id = $1`, applicationID)
		case disable:
			tag, err = tx.Exec(ctx, `UPDATE applications SET consecutive_failures = consecutive_failures + 1,
				events_enabled = false, disabled_at = $1, disabled_reason = $2, updated_at = $1 WHERE id = $3`,
				tx.now, reason, applicationID)
		default:
			tag, err = tx.Exec(ctx, `UPDATE applications SET consecutive_failures = consecutive_failures + 1 WHERE id = $1`,
				applicationID)
		}
		if err != nil {
			return err
		} else if tag.RowsAffected() == 0 {
			return canvas.NotFound("application")
		}
		return nil
	})
}
