package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// Compile-time check that DB implements the webhook package's stores.
var (
	_ webhook.ApplicationStore = (*DB)(nil)
	_ webhook.NotifierStore    = (*DB)(nil)
)

// applicationCols are the columns scanApplication reads, in order, from
// applications a; the last one tells whether a live secret exists (at the
// time given as the query's first argument).
const applicationCols = `a.id, a.workspace_id, a.name, a.prompt_id, a.environment_name, a.events_enabled,
	a.events_url, a.events_headers, a.events_types, a.consecutive_failures, a.disabled_at, a.disabled_reason,
	a.created_by, a.created_at, a.updated_at,
	EXISTS (SELECT 1 FROM application_secrets s WHERE s.application_id = a.id AND (s.expires_at IS NULL OR s.expires_at > ?))`

func scanApplication(r interface{ Scan(...any) error }) (*webhook.Application, error) {
	var a webhook.Application
	var promptID, reason sql.NullString
	err := r.Scan(&a.ID, &a.WorkspaceID, &a.Name, &promptID, &a.EnvironmentName, &a.Events.Enabled,
		&a.Events.URL, jsonCol{&a.Events.Headers}, jsonCol{&a.Events.EventTypes}, &a.Events.ConsecutiveFailures,
		nullTimeCol{&a.Events.DisabledAt}, &reason, &a.CreatedBy, timeCol{&a.CreatedAt}, timeCol{&a.UpdatedAt},
		&a.Events.HasSecret)
	if promptID.Valid {
		a.PromptID = &promptID.String
	}
	if reason.Valid {
		a.Events.DisabledReason = &reason.String
	}
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
	headers, err := jsonText(nonNil(a.Events.Headers))
	if err != nil {
		return err
	}
	types, err := jsonText(nonNil(a.Events.EventTypes))
	if err != nil {
		return err
	}
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if a.ID == "" {
		a.ID = db.NewID()
	}
	a.CreatedAt, a.UpdatedAt = tx.now, tx.now
	if _, err := tx.exec(ctx, `INSERT INTO applications (id, workspace_id, name, prompt_id, environment_name,
		events_enabled, events_url, events_headers, events_types, consecutive_failures, created_by, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)`,
		a.ID, a.WorkspaceID, a.Name, nullString(a.PromptID), a.EnvironmentName, a.Events.Enabled, a.Events.URL,
		headers, types, a.CreatedBy, formatTime(tx.now), formatTime(tx.now)); err != nil {
		return translate(err)
	}
	if err := insertSecret(ctx, tx, a.ID, secret); err != nil {
		return err
	}
	return tx.Commit()
}

func insertSecret(ctx context.Context, tx *Tx, applicationID, secret string) error {
	_, err := tx.exec(ctx, `INSERT INTO application_secrets (id, application_id, value, created_at) VALUES (?, ?, ?, ?)`,
		tx.db.NewID(), applicationID, secret, formatTime(tx.now))
	return translate(err)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// GetApplication returns an application of the workspace.
func (db *DB) GetApplication(ctx context.Context, workspaceID, id string) (*webhook.Application, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	return getApplication(ctx, tx, workspaceID, id)
}

func getApplication(ctx context.Context, tx *Tx, workspaceID, id string) (*webhook.Application, error) {
	a, err := scanApplication(tx.queryRow(ctx, `SELECT `+applicationCols+` FROM applications a
		WHERE a.workspace_id = ? AND a.id = ?`, formatTime(tx.now), workspaceID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, canvas.NotFound("application")
	}
	return a, err
}

// qApplicationsOfCanvas lists a canvas's applications, oldest first; it is
// prepared at Open, since every publish reads it (whether an application
// takes the event).
const qApplicationsOfCanvas = `SELECT ` + applicationCols + ` FROM applications a
	WHERE a.workspace_id = ? AND a.prompt_id = ? ORDER BY a.created_at, a.id`

// ListApplications returns the workspace's applications, oldest first; a
// canvasID keeps those of that canvas.
func (db *DB) ListApplications(ctx context.Context, workspaceID, canvasID string) ([]*webhook.Application, error) {
	now := formatTime(db.Now())
	var rows *sql.Rows
	var err error
	if canvasID != "" {
		rows, err = db.readStmts[qApplicationsOfCanvas].QueryContext(ctx, now, workspaceID, canvasID)
	} else {
		rows, err = db.read.QueryContext(ctx, `SELECT `+applicationCols+` FROM applications a
			WHERE a.workspace_id = ? ORDER BY a.created_at, a.id`, now, workspaceID)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*webhook.Application{}
	for rows.Next() {
		a, err := scanApplication(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, a)
	}
	return list, rows.Err()
}

// UpdateApplication applies upd and returns the application.
func (db *DB) UpdateApplication(ctx context.Context, workspaceID, id string, upd webhook.ApplicationUpdate) (*webhook.Application, error) {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	a, err := getApplication(ctx, tx, workspaceID, id)
	if err != nil {
		return nil, err
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
		a.Events.Headers = nonNil(*upd.Headers)
	}
	if upd.EventTypes != nil {
		a.Events.EventTypes = nonNil(*upd.EventTypes)
	}
	if upd.Enabled != nil {
		if *upd.Enabled {
			a.Events.ConsecutiveFailures, a.Events.DisabledAt, a.Events.DisabledReason = 0, nil, nil
		}
		a.Events.Enabled = *upd.Enabled
	}
	headers, err := jsonText(a.Events.Headers)
	if err != nil {
		return nil, err
	}
	types, err := jsonText(a.Events.EventTypes)
	if err != nil {
		return nil, err
	}
	a.UpdatedAt = tx.now
	if _, err := tx.exec(ctx, `UPDATE applications SET name = ?, prompt_id = ?, environment_name = ?,
		events_enabled = ?, events_url = ?, events_headers = ?, events_types = ?, consecutive_failures = ?,
		disabled_at = ?, disabled_reason = ?, updated_at = ? WHERE id = ?`,
		a.Name, nullString(a.PromptID), a.EnvironmentName, a.Events.Enabled, a.Events.URL, headers, types,
		a.Events.ConsecutiveFailures, nullTime(a.Events.DisabledAt), nullString(a.Events.DisabledReason),
		formatTime(tx.now), id); err != nil {
		return nil, translate(err)
	}
	return a, tx.Commit()
}

// DeleteApplication removes the application and its secrets.
func (db *DB) DeleteApplication(ctx context.Context, workspaceID, id string) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.exec(ctx, `DELETE FROM application_secrets WHERE application_id IN
		(SELECT id FROM applications WHERE workspace_id = ? AND id = ?)`, workspaceID, id); err != nil {
		return err
	}
	res, err := tx.exec(ctx, `DELETE FROM applications WHERE workspace_id = ? AND id = ?`, workspaceID, id)
	if err != nil {
		return translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return canvas.NotFound("application")
	}
	return tx.Commit()
}

// RotateSecret adds p.Secret as the newest signing secret; the live ones
// expire at now+p.Overlap unless they expire sooner.
func (db *DB) RotateSecret(ctx context.Context, p webhook.RotateSecretParams) error {
	workspaceID, id, secret, overlap := p.WorkspaceID, p.ApplicationID, p.Secret, p.Overlap
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := getApplication(ctx, tx, workspaceID, id); err != nil {
		return err
	}
	until := formatTime(tx.now.Add(overlap))
	if _, err := tx.exec(ctx, `UPDATE application_secrets SET expires_at = ?
		WHERE application_id = ? AND (expires_at IS NULL OR expires_at > ?)`, until, id, until); err != nil {
		return err
	}
	if _, err := tx.exec(ctx, `DELETE FROM application_secrets WHERE application_id = ? AND expires_at <= ?`,
		id, formatTime(tx.now)); err != nil {
		return err
	}
	if err := insertSecret(ctx, tx, id, secret); err != nil {
		return err
	}
	if _, err := tx.exec(ctx, `UPDATE applications SET updated_at = ? WHERE id = ?`, formatTime(tx.now), id); err != nil {
		return err
	}
	return tx.Commit()
}

// SubscriptionTarget returns the application's subscription as it is now,
// with its live secrets, newest first.
func (db *DB) SubscriptionTarget(ctx context.Context, applicationID string) (*webhook.SubscriptionTarget, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	t := &webhook.SubscriptionTarget{ApplicationID: applicationID, Secrets: []webhook.Secret{}}
	err = tx.queryRow(ctx, `SELECT events_enabled, consecutive_failures FROM applications WHERE id = ?`,
		applicationID).Scan(&t.Enabled, &t.ConsecutiveFailures)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, canvas.NotFound("application")
	} else if err != nil {
		return nil, err
	}
	rows, err := tx.query(ctx, `SELECT value, created_at, expires_at FROM application_secrets
		WHERE application_id = ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at DESC, id`,
		applicationID, formatTime(tx.now))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var s webhook.Secret
		if err := rows.Scan(&s.Value, timeCol{&s.CreatedAt}, nullTimeCol{&s.ExpiresAt}); err != nil {
			return nil, err
		}
		t.Secrets = append(t.Secrets, s)
	}
	return t, rows.Err()
}

// RecordSubscriptionOutcome resets the failure count after a success, or
// counts a final failure and, when disable is set, disables the
// subscription with reason. An unknown application is NOT_FOUND.
func (db *DB) RecordSubscriptionOutcome(ctx context.Context, applicationID string, succeeded, disable bool, reason string) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var res sql.Result
	switch {
	case succeeded:
		res, err = tx.exec(ctx, `UPDATE applications SET consecutive_failures = 0 WHERE id = ?`, applicationID)
	case disable:
		res, err = tx.exec(ctx, `UPDATE applications SET consecutive_failures = consecutive_failures + 1,
			events_enabled = 0, disabled_at = ?, disabled_reason = ?, updated_at = ? WHERE id = ?`,
			formatTime(tx.now), reason, formatTime(tx.now), applicationID)
	default:
		res, err = tx.exec(ctx, `UPDATE applications SET consecutive_failures = consecutive_failures + 1 WHERE id = ?`,
			applicationID)
	}
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return canvas.NotFound("application")
	}
	return tx.Commit()
}
