package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

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

// qGetRun reads a run by workspace and id.
const qGetRun = `SELECT ` + runCols + ` FROM runs WHERE workspace_id = $1 AND id = $2`

func scanRun(r scanner) (*completion.Run, error) {
	var run completion.Run
	err := r.Scan(&run.ID, &run.WorkspaceID, &run.Kind, &run.CanvasID, &run.VersionID, &run.EnvironmentName,
		&run.ApplicationID, &run.Model, &run.Status, &run.Async, jsonCol{&run.Request}, jsonCol{&run.Result},
		jsonCol{&run.Error}, &run.Usage.InputTokens, &run.Usage.OutputTokens, &run.LatencyMs, &run.WebhookURL,
		jsonCol{&run.ForwardHeaders}, &run.CreatedBy, &run.CreatedAt, &run.UpdatedAt, &run.CompletedAt)
	return &run, err
}

// CreateRun inserts p.Run, p.Job when it is not nil and p.Notify's
// deliveries (insertDelivery) in one transaction. The run's id becomes the
// RefID of the idempotency reservation ctx carries, in the same
// transaction. Concurrent calls commit apart: Postgres shares the flushes
// of concurrent commits itself.
func (db *DB) CreateRun(ctx context.Context, p completion.CreateRunParams) error {
	r := p.Run
	if r.ID == "" {
		r.ID = db.NewID()
	}
	req, err := json.Marshal(r.Request)
	if err != nil {
		return err
	}
	result, err := jsonOrNull(r.Result, r.Result == nil)
	if err != nil {
		return err
	}
	runErr, err := jsonOrNull(r.Error, r.Error == nil)
	if err != nil {
		return err
	}
	headers, err := jsonOrNull(r.ForwardHeaders, len(r.ForwardHeaders) == 0)
	if err != nil {
		return err
	}
	given := r.CompletedAt
	return db.write(ctx, func(tx *Tx) error {
		r.CreatedAt, r.UpdatedAt = tx.now, tx.now
		r.CompletedAt = nil
		if r.Terminal() {
			now := tx.now
			r.CompletedAt = &now
		} else if given != nil {
			t := instant(*given)
			r.CompletedAt = &t
		}
		if _, err := tx.Exec(ctx, `INSERT INTO runs (`+runCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,
			$11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $20, $21)`,
			r.ID, r.WorkspaceID, r.Kind, r.CanvasID, r.VersionID, r.EnvironmentName, r.ApplicationID, r.Model,
			r.Status, r.Async, string(req), result, runErr, r.Usage.InputTokens, r.Usage.OutputTokens, r.LatencyMs,
			r.WebhookURL, headers, r.CreatedBy, tx.now, r.CompletedAt); err != nil {
			return translate(err)
		}
		if job := p.Job; job != nil {
			if job.RefID == "" {
				job.RefID = r.ID
			}
			if err := insertJob(ctx, tx, job); err != nil {
				return err
			}
		}
		if err := insertDeliveries(ctx, tx, p.Notify); err != nil {
			return err
		}
		return recordIdempotencyRef(ctx, tx, idempotency.FromContext(ctx), r.ID)
	})
}

// GetRun returns a run of the workspace.
func (db *DB) GetRun(ctx context.Context, workspaceID, id string) (*completion.Run, error) {
	return getRun(ctx, db.pool, workspaceID, id)
}

func getRun(ctx context.Context, q querier, workspaceID, id string) (*completion.Run, error) {
	r, err := scanRun(q.QueryRow(ctx, qGetRun, workspaceID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, canvas.NotFound("run")
	}
	return r, err
}

// StartRun moves a queued or running run to running; a terminal run is
// CONFLICT.
func (db *DB) StartRun(ctx context.Context, workspaceID, id string) (*completion.Run, error) {
	var r *completion.Run
	err := db.write(ctx, func(tx *Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM runs WHERE workspace_id = $1 AND id = $2 FOR UPDATE`, workspaceID, id); err != nil {
			return err
		}
		var err error
		if r, err = getRun(ctx, tx, workspaceID, id); err != nil {
			return err
		}
		if r.Terminal() {
			return canvas.Errorf(canvas.ECONFLICT, "The run has already finished.")
		}
		if _, err := tx.Exec(ctx, `UPDATE runs SET status = $1, updated_at = $2 WHERE id = $3`,
			completion.StatusRunning, tx.now, id); err != nil {
			return err
		}
		r.Status, r.UpdatedAt = completion.StatusRunning, tx.now
		return nil
	})
	return r, err
}

// FinishRun writes p.Run's final state and p.Notify's deliveries
// (insertDelivery) in one transaction; a run already terminal is CONFLICT.
// The run's row is locked before its status is read, so that of two
// finishes at once, in any processes, one wins.
func (db *DB) FinishRun(ctx context.Context, p completion.FinishRunParams) error {
	r := p.Run
	result, err := jsonOrNull(r.Result, r.Result == nil)
	if err != nil {
		return err
	}
	runErr, err := jsonOrNull(r.Error, r.Error == nil)
	if err != nil {
		return err
	}
	var now time.Time
	err = db.write(ctx, func(tx *Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM runs WHERE workspace_id = $1 AND id = $2 FOR UPDATE`, r.WorkspaceID, r.ID); err != nil {
			return err
		}
		cur, err := getRun(ctx, tx, r.WorkspaceID, r.ID)
		if err != nil {
			return err
		}
		if cur.Terminal() {
			return canvas.Errorf(canvas.ECONFLICT, "The run has already finished.")
		}
		if !r.Terminal() {
			return canvas.Errorf(canvas.EINVALID, "FinishRun needs a terminal status, not %q.", r.Status)
		}
		if _, err := tx.Exec(ctx, `UPDATE runs SET status = $1, model = $2, result = $3, error = $4, input_tokens = $5,
			output_tokens = $6, latency_ms = $7, updated_at = $8, completed_at = $8 WHERE id = $9`,
			r.Status, r.Model, result, runErr, r.Usage.InputTokens, r.Usage.OutputTokens, r.LatencyMs,
			tx.now, r.ID); err != nil {
			return err
		}
		if err := insertDeliveries(ctx, tx, p.Notify); err != nil {
			return err
		}
		now = tx.now
		return nil
	})
	if err != nil {
		return err
	}
	r.UpdatedAt, r.CompletedAt = now, &now
	return nil
}

// ListRuns returns one page of the runs f selects, newest first (seq, the
// order of insertion, breaks ties between runs created at the same
// instant), and how many f selects in all, read in one snapshot. The index
// runs_kind serves a kind's runs in order.
func (db *DB) ListRuns(ctx context.Context, f completion.RunFilter) ([]*completion.Run, int, error) {
	var p params
	where := `r.workspace_id = ` + p.add(f.WorkspaceID) + ` AND r.kind = ` + p.add(f.Kind)
	for _, c := range []struct{ col, v string }{{"r.canvas_id", f.CanvasID}, {"r.version_id", f.VersionID}, {"r.status", f.Status}} {
		if c.v != "" {
			where += ` AND ` + c.col + ` = ` + p.add(c.v)
		}
	}
	where += createdWithin(&p, "r.created_at", f.Since, f.Until)
	reach := reachSQL(&p, `r.canvas_id`, f.Scope)
	noCanvas := `r.canvas_id = ''`
	if f.Actor != "" {
		noCanvas += ` AND r.created_by = ` + p.add(f.Actor)
	}
	where += ` AND ((r.canvas_id <> '' AND ` + reach + `) OR (` + noCanvas + `))`
	return listPage(ctx, db, listQuery{cols: runCols, from: `runs r`, where: where, args: p,
		order: `r.created_at DESC, r.seq DESC`, limit: f.Limit, offset: f.Offset}, func(r pgx.Rows) (*completion.Run, error) { return scanRun(r) })
}
