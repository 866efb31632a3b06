package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/idempotency"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// Compile-time check that DB implements the workflow package's Store.
var _ workflow.Store = (*DB)(nil)

// workflowRunCols are the columns scanWorkflowRun reads, in order, from
// workflow_runs.
const workflowRunCols = `id, COALESCE(external_id, ''), workspace_id, canvas_id, version_id, environment, status,
	input, start_node_id, end_node_id, output_node_id, error, webhook_url, forward_headers, application_id,
	created_by, created_at, updated_at, completed_at, deadline`

// Statements of workflow runs. A run is found in its workspace by its id
// or its external id; the id wins should one run's external id be another
// run's id.
const (
	qInsertWorkflowRun = `INSERT INTO workflow_runs (id, external_id, workspace_id, canvas_id, version_id,
		environment, status, input, start_node_id, end_node_id, output_node_id, error, webhook_url,
		forward_headers, application_id, created_by, created_at, updated_at, completed_at, deadline)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $17, $18, $19)`
	qGetWorkflowRun = `SELECT ` + workflowRunCols + ` FROM workflow_runs
		WHERE workspace_id = $1 AND (id = $2 OR external_id = $2) ORDER BY id = $2 DESC LIMIT 1`
	// qWorkflowRunStatus locks the run's row: its status is read to
	// decide a write, and changes of one run take turns across processes.
	qWorkflowRunStatus = `SELECT id, status FROM workflow_runs
		WHERE workspace_id = $1 AND (id = $2 OR external_id = $2) ORDER BY id = $2 DESC LIMIT 1 FOR UPDATE`
	qWorkflowSteps = `SELECT id, seq, name, action_id, status, input, output, error, metadata, ports,
		started_at, completed_at FROM workflow_steps WHERE run_id = $1 ORDER BY seq, id`
	qUpsertWorkflowStep = `INSERT INTO workflow_steps (run_id, id, seq, name, action_id, status, input, output,
		error, metadata, ports, started_at, completed_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (run_id, id) DO UPDATE SET seq = excluded.seq, name = excluded.name,
		action_id = excluded.action_id, status = excluded.status, input = excluded.input,
		output = excluded.output, error = excluded.error, metadata = excluded.metadata,
		ports = excluded.ports, started_at = excluded.started_at, completed_at = excluded.completed_at`
	// qCancelRunJobs cancels the run's queued or running jobs of the kinds
	// $3 except the job $4, as cancelJobs does.
	qCancelRunJobs = `UPDATE jobs SET status = 'cancelled', lease_owner = NULL, lease_until = NULL,
		updated_at = $1 WHERE ref_id = $2 AND kind = ANY($3) AND status IN ('queued', 'running') AND id <> $4`
)

func scanWorkflowRun(r scanner) (*workflow.Run, error) {
	var run workflow.Run
	err := r.Scan(&run.ID, &run.ExternalID, &run.WorkspaceID, &run.CanvasID, &run.VersionID, &run.Environment,
		&run.Status, jsonCol{&run.Input}, &run.StartNodeID, &run.EndNodeID, &run.OutputNodeID,
		jsonCol{&run.Error}, &run.WebhookURL, jsonCol{&run.ForwardHeaders}, &run.ApplicationID, &run.CreatedBy,
		&run.CreatedAt, &run.UpdatedAt, &run.CompletedAt, &run.Deadline)
	return &run, err
}

func scanWorkflowStep(r scanner) (*workflow.Step, error) {
	var s workflow.Step
	return &s, r.Scan(&s.ID, &s.Seq, &s.Name, &s.ActionID, &s.Status, rawCol{&s.Input}, rawCol{&s.Output},
		jsonCol{&s.Error}, rawCol{&s.Metadata}, jsonCol{&s.Ports}, &s.StartedAt, &s.CompletedAt)
}

// CreateWorkflowRun inserts r, its steps and jobs in one transaction. It
// sets r.ID when empty, CreatedAt and UpdatedAt, and CompletedAt when r's
// status is terminal; a job without a RefID serves the run, a job without
// a WorkspaceID belongs to the run's workspace. An external id already
// taken is CONFLICT. The run's public id becomes the RefID of the
// idempotency reservation ctx carries, in the same transaction.
func (db *DB) CreateWorkflowRun(ctx context.Context, r *workflow.Run, jobs []*queue.Job) error {
	return db.write(ctx, func(tx *Tx) error {
		if err := insertWorkflowRun(ctx, tx, r); err != nil {
			return err
		}
		if err := upsertWorkflowSteps(ctx, tx, r.ID, r.Steps); err != nil {
			return err
		}
		if err := insertWorkflowJobs(ctx, tx, r.WorkspaceID, r.ID, jobs); err != nil {
			return err
		}
		return recordIdempotencyRef(ctx, tx, idempotency.FromContext(ctx), r.PublicID())
	})
}

// insertWorkflowRun writes r (not its steps) inside tx, setting its id when
// empty and its timestamps from tx.now.
func insertWorkflowRun(ctx context.Context, tx *Tx, r *workflow.Run) error {
	if r.ID == "" {
		r.ID = tx.db.NewID()
	}
	r.CreatedAt, r.UpdatedAt, r.CompletedAt = tx.now, tx.now, nil
	if workflow.Terminal(r.Status) {
		now := tx.now
		r.CompletedAt = &now
	}
	r.Deadline = instant(r.Deadline)
	input, err := jsonText(r.Input)
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
	var external any
	if r.ExternalID != "" {
		external = r.ExternalID
	}
	_, err = tx.Exec(ctx, qInsertWorkflowRun, r.ID, external, r.WorkspaceID, r.CanvasID, r.VersionID,
		r.Environment, r.Status, input, r.StartNodeID, r.EndNodeID, r.OutputNodeID, runErr, r.WebhookURL, headers,
		r.ApplicationID, r.CreatedBy, tx.now, r.CompletedAt, r.Deadline)
	return translate(err)
}

// upsertWorkflowSteps writes steps of the run runID inside tx, each
// replacing the stored step with the same id.
func upsertWorkflowSteps(ctx context.Context, tx *Tx, runID string, steps []*workflow.Step) error {
	for _, s := range steps {
		stepErr, err := jsonOrNull(s.Error, s.Error == nil)
		if err != nil {
			return err
		}
		ports, err := jsonOrNull(s.Ports, s.Ports == nil)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, qUpsertWorkflowStep, runID, s.ID, s.Seq, s.Name, s.ActionID, s.Status,
			nullRaw(s.Input), nullRaw(s.Output), stepErr, nullRaw(s.Metadata), ports, nullInstant(s.StartedAt),
			nullInstant(s.CompletedAt)); err != nil {
			return translate(err)
		}
	}
	return nil
}

// insertWorkflowJobs enqueues jobs inside tx for the run runID of the
// workspace workspaceID, filling in their RefID and WorkspaceID when empty.
func insertWorkflowJobs(ctx context.Context, tx *Tx, workspaceID, runID string, jobs []*queue.Job) error {
	for _, j := range jobs {
		if j.RefID == "" {
			j.RefID = runID
		}
		if j.WorkspaceID == "" {
			j.WorkspaceID = workspaceID
		}
		if err := insertJob(ctx, tx, j); err != nil {
			return err
		}
	}
	return nil
}

// GetWorkflowRun returns a run of the workspace found by its id or its
// external id, with its steps in Seq order, read in one snapshot.
func (db *DB) GetWorkflowRun(ctx context.Context, workspaceID, id string) (*workflow.Run, error) {
	var r *workflow.Run
	err := db.read(ctx, func(tx *Tx) error {
		var err error
		r, err = getWorkflowRunTx(ctx, tx, workspaceID, id)
		return err
	})
	return r, err
}

// getWorkflowRunTx reads a run with its steps inside tx.
func getWorkflowRunTx(ctx context.Context, tx *Tx, workspaceID, id string) (*workflow.Run, error) {
	r, err := scanWorkflowRun(tx.QueryRow(ctx, qGetWorkflowRun, workspaceID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, canvas.NotFound("workflow run")
	} else if err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, qWorkflowSteps, r.ID)
	r.Steps, err = rowsOf(rows, err, func(r pgx.Rows) (*workflow.Step, error) { return scanWorkflowStep(r) })
	if err != nil {
		return nil, err
	}
	return r, nil
}

// workflowRunStatus returns the id and status of a run of the workspace
// found by its id or its external id, inside tx, and locks its row.
func workflowRunStatus(ctx context.Context, tx *Tx, workspaceID, id string) (runID, status string, err error) {
	err = tx.QueryRow(ctx, qWorkflowRunStatus, workspaceID, id).Scan(&runID, &status)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", canvas.NotFound("workflow run")
	}
	return runID, status, err
}

// SaveWorkflowSteps writes steps of a run that has not ended; a run that
// has is CONFLICT and nothing is written. The run is found as
// GetWorkflowRun finds it.
func (db *DB) SaveWorkflowSteps(ctx context.Context, workspaceID, runID string, steps []*workflow.Step) error {
	if len(steps) == 0 {
		return nil
	}
	return db.write(ctx, func(tx *Tx) error {
		id, status, err := workflowRunStatus(ctx, tx, workspaceID, runID)
		if err != nil {
			return err
		}
		if workflow.Terminal(status) {
			return canvas.Errorf(canvas.ECONFLICT, "The workflow run has already ended (%s).", status)
		}
		return upsertWorkflowSteps(ctx, tx, id, steps)
	})
}

// ChangeWorkflowRun moves a run from c.From to c.To in one transaction with
// c's steps, jobs and deliveries (insertDelivery): CONFLICT, and nothing
// written, unless the run's status is c.From. CompletedAt is set when c.To
// is terminal. The run's queued or running jobs of c.CancelKinds other
// than c.ExceptJobID are cancelled before c.Jobs are enqueued. The run is
// found as GetWorkflowRun finds it.
func (db *DB) ChangeWorkflowRun(ctx context.Context, c *workflow.Change) (*workflow.Run, error) {
	if c.To == "" {
		return nil, canvas.Invalid("A change needs a status to move to.", canvas.Detail{Path: "/to", Message: "required"})
	}
	var out *workflow.Run
	err := db.write(ctx, func(tx *Tx) error {
		id, status, err := workflowRunStatus(ctx, tx, c.WorkspaceID, c.RunID)
		if err != nil {
			return err
		}
		if status != c.From {
			return canvas.Errorf(canvas.ECONFLICT, "The workflow run is %s, not %s.", status, c.From)
		}
		var set setList
		set.add("status", c.To)
		set.add("updated_at", tx.now)
		if c.OutputNodeID != "" {
			set.add("output_node_id", c.OutputNodeID)
		}
		if c.Error != nil {
			runErr, err := jsonText(c.Error)
			if err != nil {
				return err
			}
			set.add("error", runErr)
		}
		if workflow.Terminal(c.To) {
			set.add("completed_at", tx.now)
		}
		if _, err := tx.Exec(ctx, `UPDATE workflow_runs SET `+set.sql()+` WHERE id = `+set.args.add(id), set.args...); err != nil {
			return err
		}
		if err := upsertWorkflowSteps(ctx, tx, id, c.Steps); err != nil {
			return err
		}
		if len(c.CancelKinds) > 0 {
			if _, err := tx.Exec(ctx, qCancelRunJobs, tx.now, id, c.CancelKinds, c.ExceptJobID); err != nil {
				return err
			}
		}
		if err := insertWorkflowJobs(ctx, tx, c.WorkspaceID, id, c.Jobs); err != nil {
			return err
		}
		if err := insertDeliveries(ctx, tx, c.Notify); err != nil {
			return err
		}
		out, err = getWorkflowRunTx(ctx, tx, c.WorkspaceID, id)
		return err
	})
	return out, err
}

// ListWorkflowRuns returns one page of the workspace's runs that f
// selects, without their steps, newest first (seq, the order of
// insertion, breaks ties between runs created at the same instant), and
// how many f selects in all, read in one snapshot.
func (db *DB) ListWorkflowRuns(ctx context.Context, workspaceID string, f workflow.RunFilter) ([]*workflow.Run, int, error) {
	var p params
	where := `workspace_id = ` + p.add(workspaceID)
	for _, c := range []struct{ col, v string }{{"canvas_id", f.CanvasID}, {"version_id", f.VersionID}, {"status", f.Status}} {
		if c.v != "" {
			where += ` AND ` + c.col + ` = ` + p.add(c.v)
		}
	}
	where += createdWithin(&p, "created_at", f.Since, f.Until)
	if f.Reach != nil {
		where += ` AND ` + reachSQL(&p, `workflow_runs.canvas_id`, *f.Reach)
	}
	return listPage(ctx, db, listQuery{cols: workflowRunCols, from: `workflow_runs`, where: where, args: p,
		order: `created_at DESC, seq DESC`, limit: f.Limit, offset: f.Offset}, func(r pgx.Rows) (*workflow.Run, error) { return scanWorkflowRun(r) })
}
