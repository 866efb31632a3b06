package sqlstore

import (
	"context"
	"errors"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// Compile-time check that Store implements the webhook package's
// application store.
var _ webhook.ApplicationStore = (*Store)(nil)

// applicationCols are the columns scanApplication reads, in order, from
// applications a; the last one tells whether a live secret exists at the
// time given as the query's first argument.
const applicationCols = `a.id, a.workspace_id, a.name, a.prompt_id, a.environment_name, a.events_enabled,
	a.events_url, a.events_headers, a.events_types, a.consecutive_failures, a.disabled_at, a.disabled_reason,
	a.created_by, a.created_at, a.updated_at,
	EXISTS (SELECT 1 FROM application_secrets s WHERE s.application_id = a.id AND (s.expires_at IS NULL OR s.expires_at > ?))`

// QApplicationsOfCanvas lists a canvas's applications, oldest first; the
// SQLite driver prepares it at Open, since the notifier of every publish
// reads it.
const QApplicationsOfCanvas = `SELECT ` + applicationCols + ` FROM applications a
	WHERE a.workspace_id = ? AND a.prompt_id = ? ORDER BY a.created_at, a.id`

func scanApplication(r Row) (*webhook.Application, error) {
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
func (s *Store) CreateApplication(ctx context.Context, a *webhook.Application, secret string) error {
	headers, err := jsonText(orEmpty(a.Events.Headers))
	if err != nil {
		return err
	}
	types, err := jsonText(orEmpty(a.Events.EventTypes))
	if err != nil {
		return err
	}
	return s.writeAudited(ctx, Alone, changeOf("application.create", auditApplication, a.WorkspaceID, &a.ID), func(ctx context.Context, tx *Tx) error {
		if a.ID == "" {
			a.ID = tx.NewID()
		}
		a.CreatedAt, a.UpdatedAt = tx.Now, tx.Now
		if _, err := tx.Exec(ctx, `INSERT INTO applications (id, workspace_id, name, prompt_id, environment_name,
			events_enabled, events_url, events_headers, events_types, consecutive_failures, created_by, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)`,
			a.ID, a.WorkspaceID, a.Name, nullString(a.PromptID), a.EnvironmentName, a.Events.Enabled, a.Events.URL,
			headers, types, a.CreatedBy, tx.Now, tx.Now); err != nil {
			return err
		}
		return insertSecret(ctx, tx, a.ID, secret)
	})
}

func insertSecret(ctx context.Context, tx *Tx, applicationID, secret string) error {
	_, err := tx.Exec(ctx, `INSERT INTO application_secrets (id, application_id, value, created_at) VALUES (?, ?, ?, ?)`,
		tx.NewID(), applicationID, secret, tx.Now)
	return err
}

// GetApplication returns an application of the workspace.
func (s *Store) GetApplication(ctx context.Context, workspaceID, id string) (*webhook.Application, error) {
	var a *webhook.Application
	err := s.readAlone(ctx, func(ctx context.Context, tx *Tx) error {
		var err error
		a, err = getApplication(ctx, tx, workspaceID, id, "")
		return err
	})
	return a, err
}

// getApplication reads an application inside tx; lock is appended to the
// query (a row-lock clause, or nothing).
func getApplication(ctx context.Context, tx *Tx, workspaceID, id, lock string) (*webhook.Application, error) {
	a, err := scanApplication(tx.QueryRow(ctx, `SELECT `+applicationCols+` FROM applications a
		WHERE a.workspace_id = ? AND a.id = ?`+lock, tx.Now, workspaceID, id))
	if errors.Is(err, ErrNoRows) {
		return nil, canvas.NotFound("application")
	}
	return a, err
}

// ListApplications returns the workspace's applications, oldest first; a
// canvasID keeps those of that canvas.
func (s *Store) ListApplications(ctx context.Context, workspaceID, canvasID string) ([]*webhook.Application, error) {
	var list []*webhook.Application
	err := s.readAlone(ctx, func(ctx context.Context, tx *Tx) error {
		var rows Rows
		var err error
		if canvasID != "" {
			rows, err = tx.Query(ctx, QApplicationsOfCanvas, tx.Now, workspaceID, canvasID)
		} else {
			rows, err = tx.Query(ctx, `SELECT `+applicationCols+` FROM applications a
				WHERE a.workspace_id = ? ORDER BY a.created_at, a.id`, tx.Now, workspaceID)
		}
		list, err = RowsOf(rows, err, func(r Rows) (*webhook.Application, error) { return scanApplication(r) })
		return err
	})
	return list, err
}

// UpdateApplication applies upd and returns the application. The row is
// locked while it is read and rewritten.
func (s *Store) UpdateApplication(ctx context.Context, workspaceID, id string, upd webhook.ApplicationUpdate) (*webhook.Application, error) {
	var out *webhook.Application
	err := s.writeAudited(ctx, Alone, changeOf("application.update", auditApplication, workspaceID, &id), func(ctx context.Context, tx *Tx) error {
		a, err := getApplication(ctx, tx, workspaceID, id, s.d.forUpdateOf("a"))
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
		a.UpdatedAt = tx.Now
		if _, err := tx.Exec(ctx, `UPDATE applications SET name = ?, prompt_id = ?, environment_name = ?,
			events_enabled = ?, events_url = ?, events_headers = ?, events_types = ?, consecutive_failures = ?,
			disabled_at = ?, disabled_reason = ?, updated_at = ? WHERE id = ?`,
			a.Name, nullString(a.PromptID), a.EnvironmentName, a.Events.Enabled, a.Events.URL, headers, types,
			a.Events.ConsecutiveFailures, a.Events.DisabledAt, nullString(a.Events.DisabledReason),
			tx.Now, id); err != nil {
			return err
		}
		out = a
		return nil
	})
	return out, err
}

// DeleteApplication removes the application and its secrets.
func (s *Store) DeleteApplication(ctx context.Context, workspaceID, id string) error {
	return s.writeAudited(ctx, Alone, changeOf("application.delete", auditApplication, workspaceID, &id), func(ctx context.Context, tx *Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM application_secrets WHERE application_id IN
			(SELECT id FROM applications WHERE workspace_id = ? AND id = ?)`, workspaceID, id); err != nil {
			return err
		}
		n, err := tx.Exec(ctx, `DELETE FROM applications WHERE workspace_id = ? AND id = ?`, workspaceID, id)
		if err != nil {
			return err
		} else if n == 0 {
			return canvas.NotFound("application")
		}
		return nil
	})
}

// RotateSecret adds p.Secret as the newest signing secret; the live ones
// expire at now+p.Overlap unless they expire sooner.
func (s *Store) RotateSecret(ctx context.Context, p webhook.RotateSecretParams) error {
	return s.writeAudited(ctx, Alone, changeOf("application.rotate-secret", auditApplication, p.WorkspaceID, &p.ApplicationID), func(ctx context.Context, tx *Tx) error {
		if _, err := getApplication(ctx, tx, p.WorkspaceID, p.ApplicationID, s.d.forUpdateOf("a")); err != nil {
			return err
		}
		until := tx.Now.Add(p.Overlap)
		if _, err := tx.Exec(ctx, `UPDATE application_secrets SET expires_at = ?
			WHERE application_id = ? AND (expires_at IS NULL OR expires_at > ?)`, until, p.ApplicationID, until); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM application_secrets WHERE application_id = ? AND expires_at <= ?`,
			p.ApplicationID, tx.Now); err != nil {
			return err
		}
		if err := insertSecret(ctx, tx, p.ApplicationID, p.Secret); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE applications SET updated_at = ? WHERE id = ?`, tx.Now, p.ApplicationID)
		return err
	})
}

// SubscriptionTarget returns the application's subscription as it is now,
// with its live secrets, newest first.
func (s *Store) SubscriptionTarget(ctx context.Context, applicationID string) (*webhook.SubscriptionTarget, error) {
	var t *webhook.SubscriptionTarget
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		t = &webhook.SubscriptionTarget{ApplicationID: applicationID}
		err := tx.QueryRow(ctx, `SELECT events_enabled, consecutive_failures FROM applications WHERE id = ?`,
			applicationID).Scan(&t.Enabled, &t.ConsecutiveFailures)
		if errors.Is(err, ErrNoRows) {
			return canvas.NotFound("application")
		} else if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT value, created_at, expires_at FROM application_secrets
			WHERE application_id = ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at DESC, id`,
			applicationID, tx.Now)
		t.Secrets, err = RowsOf(rows, err, func(r Rows) (webhook.Secret, error) {
			var sec webhook.Secret
			return sec, r.Scan(&sec.Value, &sec.CreatedAt, &sec.ExpiresAt)
		})
		return err
	})
	return t, err
}

// RecordSubscriptionOutcome resets the failure count after a success, or
// counts a final failure and, when disable is set, disables the
// subscription with reason: a change the audit log records, the system's.
// An unknown application is NOT_FOUND.
func (s *Store) RecordSubscriptionOutcome(ctx context.Context, applicationID string, succeeded, disable bool, reason string) error {
	return s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		record := func() error {
			var n int64
			var err error
			switch {
			case succeeded:
				n, err = tx.Exec(ctx, `UPDATE applications SET consecutive_failures = 0 WHERE id = ?`, applicationID)
			case disable:
				n, err = tx.Exec(ctx, `UPDATE applications SET consecutive_failures = consecutive_failures + 1,
					events_enabled = ?, disabled_at = ?, disabled_reason = ?, updated_at = ? WHERE id = ?`,
					false, tx.Now, reason, tx.Now, applicationID)
			default:
				n, err = tx.Exec(ctx, `UPDATE applications SET consecutive_failures = consecutive_failures + 1 WHERE id = ?`,
					applicationID)
			}
			if err != nil {
				return err
			} else if n == 0 {
				return canvas.NotFound("application")
			}
			return nil
		}
		if succeeded || !disable {
			return record()
		}
		var workspaceID string
		err := tx.QueryRow(ctx, `SELECT workspace_id FROM applications WHERE id = ?`, applicationID).Scan(&workspaceID)
		if errors.Is(err, ErrNoRows) {
			return canvas.NotFound("application")
		} else if err != nil {
			return err
		}
		id := applicationID
		return s.audited(ctx, tx, changeOf("application.disable-subscription", auditApplication, workspaceID, &id), record)
	})
}
