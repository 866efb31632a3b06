package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/idempotency"
)

// Compile-time check that DB implements the completion package's Store.
var _ completion.Store = (*DB)(nil)

// runCols are the columns scanRun reads, in order, from runs.
const runCols = `id, workspace_id, kind, canvas_id, version_id, environment_name, application_id, model,
	status, async, request, result, error, input_tokens, output_tokens, latency_ms, webhook_url,
	forward_headers, created_by, created_at, updated_at, completed_at`

// qInsertRun inserts a run; it is prepared at Open.
const qInsertRun = `INSERT INTO runs (` + runCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// qGetRun reads a run by workspace and id.
const qGetRun = `SELECT ` + runCols + ` FROM runs WHERE workspace_id = ? AND id = ?`

// The statements of an async run's life, prepared at Open: its start, the
// check that it has not ended yet, and its end.
const (
	terminalStatuses = `'` + completion.StatusCompleted + `', '` + completion.StatusFailed + `'`
	qStartRun        = `UPDATE runs SET status = ?, updated_at = ? WHERE id = ?`
	qRunTerminal     = `SELECT status IN (` + terminalStatuses + `) FROM runs WHERE workspace_id = ? AND id = ?`
	qFinishRun       = `UPDATE runs SET status = ?, model = ?, result = ?, error = ?, input_tokens = ?,
		output_tokens = ?, latency_ms = ?, updated_at = ?, completed_at = ? WHERE id = ?`
)

func scanRun(r interface{ Scan(...any) error }) (*completion.Run, error) {
	var run completion.Run
	err := r.Scan(&run.ID, &run.WorkspaceID, &run.Kind, &run.CanvasID, &run.VersionID, &run.EnvironmentName,
		&run.ApplicationID, &run.Model, &run.Status, &run.Async, jsonCol{&run.Request}, jsonCol{&run.Result},
		jsonCol{&run.Error}, &run.Usage.InputTokens, &run.Usage.OutputTokens, &run.LatencyMs, &run.WebhookURL,
		jsonCol{&run.ForwardHeaders}, &run.CreatedBy, timeCol{&run.CreatedAt}, timeCol{&run.UpdatedAt},
		nullTimeCol{&run.CompletedAt})
	return &run, err
}

// jsonOrNull encodes v as JSON text, or NULL when v is a nil pointer or an
// empty slice.
func jsonOrNull[T any](v T, empty bool) (any, error) {
	if empty {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// CreateRun inserts p.Run, p.Job when it is not nil and p.Notify's
// deliveries (insertDelivery) in one transaction, shared with concurrent
// run writes (runs_batch.go); it returns once that transaction's commit is
// durable. The run's id becomes the RefID of the idempotency reservation
// ctx carries, in the same transaction.
func (db *DB) CreateRun(ctx context.Context, p completion.CreateRunParams) error {
	if p.Job == nil && len(p.Notify) == 0 {
		return db.createRunGrouped(ctx, p.Run)
	}
	row, err := encodeRun(db, p.Run)
	if err != nil {
		return err
	}
	return db.groupCommit(ctx, &db.runCommits, func(ctx context.Context, tx *Tx) error {
		if err := row.insert(ctx, tx); err != nil {
			return err
		}
		if job := p.Job; job != nil {
			if job.RefID == "" {
				job.RefID = p.Run.ID
			}
			if err := insertJob(ctx, tx, job); err != nil {
				return err
			}
		}
		if err := insertDeliveries(ctx, tx, p.Notify); err != nil {
			return err
		}
		return recordIdempotencyRef(ctx, tx, idempotency.FromContext(ctx), p.Run.ID)
	})
}

// runRow is a run with its JSON columns encoded: everything its insert
// needs but the transaction's clock. A grouped insert encodes it in the
// caller's goroutine, so that the leader of a shared commit, which runs
// the batch's inserts one after the other, only binds it.
type runRow struct {
	run                     *completion.Run
	request                 string
	result, runErr, headers any // JSON text or nil (NULL)
}

// encodeRun sets r's id when empty and encodes its JSON columns.
func encodeRun(db *DB, r *completion.Run) (*runRow, error) {
	if r.ID == "" {
		r.ID = db.NewID()
	}
	req, err := json.Marshal(r.Request)
	if err != nil {
		return nil, err
	}
	row := &runRow{run: r, request: string(req)}
	if row.result, err = jsonOrNull(r.Result, r.Result == nil); err != nil {
		return nil, err
	}
	if row.runErr, err = jsonOrNull(r.Error, r.Error == nil); err != nil {
		return nil, err
	}
	if row.headers, err = jsonOrNull(r.ForwardHeaders, len(r.ForwardHeaders) == 0); err != nil {
		return nil, err
	}
	return row, nil
}

// insert writes the row inside tx, setting the run's timestamps from
// tx.now.
func (row *runRow) insert(ctx context.Context, tx *Tx) error {
	r := row.run
	r.CreatedAt, r.UpdatedAt = tx.now, tx.now
	now := formatTime(tx.now)
	var completed any
	if r.Terminal() {
		r.CompletedAt = &tx.now
		completed = now
	} else if r.CompletedAt != nil {
		completed = formatTime(*r.CompletedAt)
	}
	_, err := tx.exec(ctx, qInsertRun, r.ID, r.WorkspaceID, r.Kind, r.CanvasID, r.VersionID, r.EnvironmentName,
		r.ApplicationID, r.Model, r.Status, r.Async, row.request, row.result, row.runErr, r.Usage.InputTokens,
		r.Usage.OutputTokens, r.LatencyMs, r.WebhookURL, row.headers, r.CreatedBy, now, now, completed)
	return translate(err)
}

// GetRun returns a run of the workspace.
func (db *DB) GetRun(ctx context.Context, workspaceID, id string) (*completion.Run, error) {
	r, err := scanRun(db.read.QueryRowContext(ctx, qGetRun, workspaceID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, canvas.NotFound("run")
	}
	return r, err
}

// StartRun moves a queued or running run to running; a terminal run is
// CONFLICT. It shares its commit with concurrent run writes.
func (db *DB) StartRun(ctx context.Context, workspaceID, id string) (*completion.Run, error) {
	var r *completion.Run
	err := db.groupCommit(ctx, &db.runCommits, func(ctx context.Context, tx *Tx) error {
		cur, err := getRunTx(ctx, tx, workspaceID, id)
		if err != nil {
			return err
		}
		if cur.Terminal() {
			return canvas.Errorf(canvas.ECONFLICT, "The run has already finished.")
		}
		if _, err := tx.exec(ctx, qStartRun, completion.StatusRunning, formatTime(tx.now), id); err != nil {
			return err
		}
		cur.Status, cur.UpdatedAt = completion.StatusRunning, tx.now
		r = cur
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// FinishRun writes p.Run's final state and p.Notify's deliveries
// (insertDelivery) in one transaction, shared with concurrent run writes;
// a run already terminal is CONFLICT.
func (db *DB) FinishRun(ctx context.Context, p completion.FinishRunParams) error {
	r := p.Run
	if !r.Terminal() {
		return canvas.Errorf(canvas.EINVALID, "FinishRun needs a terminal status, not %q.", r.Status)
	}
	result, err := jsonOrNull(r.Result, r.Result == nil)
	if err != nil {
		return err
	}
	runErr, err := jsonOrNull(r.Error, r.Error == nil)
	if err != nil {
		return err
	}
	var at time.Time
	err = db.groupCommit(ctx, &db.runCommits, func(ctx context.Context, tx *Tx) error {
		var terminal bool
		if err := tx.queryRow(ctx, qRunTerminal, r.WorkspaceID, r.ID).Scan(&terminal); errors.Is(err, sql.ErrNoRows) {
			return canvas.NotFound("run")
		} else if err != nil {
			return err
		}
		if terminal {
			return canvas.Errorf(canvas.ECONFLICT, "The run has already finished.")
		}
		now := formatTime(tx.now)
		if _, err := tx.exec(ctx, qFinishRun, r.Status, r.Model, result, runErr, r.Usage.InputTokens,
			r.Usage.OutputTokens, r.LatencyMs, now, now, r.ID); err != nil {
			return err
		}
		if err := insertDeliveries(ctx, tx, p.Notify); err != nil {
			return err
		}
		at = tx.now
		return nil
	})
	if err != nil {
		return err
	}
	r.UpdatedAt, r.CompletedAt = at, &at
	return nil
}

func getRunTx(ctx context.Context, tx *Tx, workspaceID, id string) (*completion.Run, error) {
	r, err := scanRun(tx.queryRow(ctx, qGetRun, workspaceID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, canvas.NotFound("run")
	}
	return r, err
}

// reachSQL is the SQL condition that canvas column col names a live canvas
// of scope: one of its projects (every project when scope.Projects is nil),
// or a personal draft of scope.UserID; it returns the condition with its
// arguments.
func reachSQL(col string, scope canvas.Scope) (string, []any) {
	args := []any{scope.WorkspaceID}
	reach := `c.project_id IS NOT NULL`
	if scope.Projects != nil {
		reach = `c.project_id IN (SELECT value FROM json_each(?))`
		args = append(args, idList(scope.Projects))
	}
	if scope.UserID != "" {
		reach = `(` + reach + `) OR (c.project_id IS NULL AND c.created_by = ?)`
		args = append(args, scope.UserID)
	}
	return `EXISTS (SELECT 1 FROM canvases c WHERE c.workspace_id = ? AND c.id = ` + col +
		` AND c.deleted_at IS NULL AND (` + reach + `))`, args
}

// ListRuns returns one page of the runs f selects, newest first (the rowid,
// the order of insertion, breaks ties between runs created at the same
// instant), and how many f selects in all, read in one snapshot. The
// index runs_kind serves a kind's runs in order.
func (db *DB) ListRuns(ctx context.Context, f completion.RunFilter) ([]*completion.Run, int, error) {
	where := `r.workspace_id = ? AND r.kind = ?`
	args := []any{f.WorkspaceID, f.Kind}
	for _, c := range []struct{ col, v string }{{"r.canvas_id", f.CanvasID}, {"r.version_id", f.VersionID}, {"r.status", f.Status}} {
		if c.v != "" {
			where += ` AND ` + c.col + ` = ?`
			args = append(args, c.v)
		}
	}
	if !f.Since.IsZero() {
		where += ` AND r.created_at >= ?`
		args = append(args, formatTime(f.Since))
	}
	if !f.Until.IsZero() {
		where += ` AND r.created_at < ?`
		args = append(args, formatTime(f.Until))
	}
	reach, reachArgs := reachSQL(`r.canvas_id`, f.Scope)
	noCanvas := `r.canvas_id = ''`
	if f.Actor != "" {
		noCanvas += ` AND r.created_by = ?`
		reachArgs = append(reachArgs, f.Actor)
	}
	where += ` AND ((r.canvas_id <> '' AND ` + reach + `) OR (` + noCanvas + `))`
	args = append(args, reachArgs...)

	return listPage(ctx, db, listQuery{cols: runCols, from: `runs r`, where: where, args: args,
		order: `r.created_at DESC, r.rowid DESC`, limit: f.Limit, offset: f.Offset}, func(r *sql.Rows) (*completion.Run, error) { return scanRun(r) })
}
