package sqlstore

import (
	"context"
	"errors"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/idempotency"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// Compile-time check that Store implements the workflow package's Store.
var _ workflow.Store = (*Store)(nil)

// Workflow runs and their steps. The engine writes a step's state on every
// change, so SaveWorkflowSteps is a write of the Workflows group: on
// SQLite, concurrent callers share commits, and a run of many parallel
// branches pays one disk flush per batch of step writes, not one per
// write. Status transitions (ChangeWorkflowRun) are rarer and commit
// alone, with the steps and jobs that go with them.

// workflowRunCols are the columns scanWorkflowRun reads, in order, from
// workflow_runs.
const workflowRunCols = `id, COALESCE(external_id, ''), workspace_id, canvas_id, version_id, environment, status,
	input, start_node_id, end_node_id, output_node_id, error, webhook_url, forward_headers, application_id,
	created_by, created_at, updated_at, completed_at, deadline`

// Statements of workflow runs. A run is found in its workspace by its id
// or its external id (the second, third and fourth arguments); the id
// wins should one run's external id be another run's id.
const (
	qInsertWorkflowRun = `INSERT INTO workflow_runs (id, external_id, workspace_id, canvas_id, version_id,
		environment, status, input, start_node_id, end_node_id, output_node_id, error, webhook_url,
		forward_headers, application_id, created_by, created_at, updated_at, completed_at, deadline)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qGetWorkflowRun = `SELECT ` + workflowRunCols + ` FROM workflow_runs
		WHERE workspace_id = ? AND (id = ? OR external_id = ?) ORDER BY id = ? DESC LIMIT 1`
	// QWorkflowRunStatus reads a run's id and status; a write that decides
	// by the status appends the dialect's ForUpdate, so that changes of
	// one run take turns across processes. The SQLite driver prepares it
	// at Open.
	QWorkflowRunStatus = `SELECT id, status FROM workflow_runs
		WHERE workspace_id = ? AND (id = ? OR external_id = ?) ORDER BY id = ? DESC LIMIT 1`
	qWorkflowSteps = `SELECT id, seq, name, action_id, status, input, output, error, metadata, ports,
		started_at, completed_at FROM workflow_steps WHERE run_id = ? ORDER BY seq, id`
	// QUpsertWorkflowStep writes a step, replacing the stored one of the
	// same id; the SQLite driver prepares it at Open.
	QUpsertWorkflowStep = `INSERT INTO workflow_steps (run_id, id, seq, name, action_id, status, input, output,
		error, metadata, ports, started_at, completed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (run_id, id) DO UPDATE SET seq = excluded.seq, name = excluded.name,
		action_id = excluded.action_id, status = excluded.status, input = excluded.input,
		output = excluded.output, error = excluded.error, metadata = excluded.metadata,
		ports = excluded.ports, started_at = excluded.started_at, completed_at = excluded.completed_at`
)

// cancelRunJobs is the statement that cancels the run's queued or running
// jobs of the kinds of the third argument (IDs) except the job of the
// fourth, as cancelJobs does.
func (d Dialect) cancelRunJobs() string {
	return `UPDATE jobs SET status = 'cancelled', lease_owner = NULL, lease_until = NULL,
		updated_at = ? WHERE ref_id = ? AND ` + d.InIDs(`kind`) + ` AND status IN ('queued', 'running') AND id <> ?`
}

func scanWorkflowRun(r Row) (*workflow.Run, error) {
	var run workflow.Run
	err := r.Scan(&run.ID, &run.ExternalID, &run.WorkspaceID, &run.CanvasID, &run.VersionID, &run.Environment,
		&run.Status, jsonCol{&run.Input}, &run.StartNodeID, &run.EndNodeID, &run.OutputNodeID,
		jsonCol{&run.Error}, &run.WebhookURL, jsonCol{&run.ForwardHeaders}, &run.ApplicationID, &run.CreatedBy,
		&run.CreatedAt, &run.UpdatedAt, &run.CompletedAt, &run.Deadline)
	return &run, err
}

func scanWorkflowStep(r Row) (*workflow.Step, error) {
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
func (s *Store) CreateWorkflowRun(ctx context.Context, r *workflow.Run, jobs []*queue.Job) error {
	return s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		if err := s.insertWorkflowRun(ctx, tx, r); err != nil {
			return err
		}
		if err := upsertWorkflowSteps(ctx, tx, r.ID, r.Steps); err != nil {
			return err
		}
		if err := s.insertWorkflowJobs(ctx, tx, r.WorkspaceID, r.ID, jobs); err != nil {
			return err
		}
		return recordIdempotencyRef(ctx, tx, idempotency.FromContext(ctx), r.PublicID())
	})
}

// insertWorkflowRun writes r (not its steps) inside tx, setting its id when
// empty and its timestamps from tx.Now.
func (s *Store) insertWorkflowRun(ctx context.Context, tx *Tx, r *workflow.Run) error {
	if r.ID == "" {
		r.ID = tx.NewID()
	}
	r.CreatedAt, r.UpdatedAt, r.CompletedAt = tx.Now, tx.Now, nil
	if workflow.Terminal(r.Status) {
		now := tx.Now
		r.CompletedAt = &now
	}
	r.Deadline = s.d.Instant(r.Deadline)
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
		r.ApplicationID, r.CreatedBy, tx.Now, tx.Now, r.CompletedAt, r.Deadline)
	return err
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
		if _, err := tx.Exec(ctx, QUpsertWorkflowStep, runID, s.ID, s.Seq, s.Name, s.ActionID, s.Status,
			nullRaw(s.Input), nullRaw(s.Output), stepErr, nullRaw(s.Metadata), ports, s.StartedAt,
			s.CompletedAt); err != nil {
			return err
		}
	}
	return nil
}

// insertWorkflowJobs enqueues jobs inside tx for the run runID of the
// workspace workspaceID, filling in their RefID and WorkspaceID when empty.
func (s *Store) insertWorkflowJobs(ctx context.Context, tx *Tx, workspaceID, runID string, jobs []*queue.Job) error {
	for _, j := range jobs {
		if j.RefID == "" {
			j.RefID = runID
		}
		if j.WorkspaceID == "" {
			j.WorkspaceID = workspaceID
		}
		if err := s.insertJob(ctx, tx, j); err != nil {
			return err
		}
	}
	return nil
}

// GetWorkflowRun returns a run of the workspace found by its id or its
// external id, with its steps in Seq order, read in one snapshot.
func (s *Store) GetWorkflowRun(ctx context.Context, workspaceID, id string) (*workflow.Run, error) {
	var r *workflow.Run
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		var err error
		r, err = getWorkflowRunTx(ctx, tx, workspaceID, id)
		return err
	})
	return r, err
}

// getWorkflowRunTx reads a run with its steps inside tx.
func getWorkflowRunTx(ctx context.Context, tx *Tx, workspaceID, id string) (*workflow.Run, error) {
	r, err := scanWorkflowRun(tx.QueryRow(ctx, qGetWorkflowRun, workspaceID, id, id, id))
	if errors.Is(err, ErrNoRows) {
		return nil, canvas.NotFound("workflow run")
	} else if err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, qWorkflowSteps, r.ID)
	r.Steps, err = RowsOf(rows, err, func(r Rows) (*workflow.Step, error) { return scanWorkflowStep(r) })
	if err != nil {
		return nil, err
	}
	return r, nil
}

// workflowRunStatus returns the id and status of a run of the workspace
// found by its id or its external id, inside tx, and locks its row.
func (s *Store) workflowRunStatus(ctx context.Context, tx *Tx, workspaceID, id string) (runID, status string, err error) {
	err = tx.QueryRow(ctx, QWorkflowRunStatus+s.d.ForUpdate(), workspaceID, id, id, id).Scan(&runID, &status)
	if errors.Is(err, ErrNoRows) {
		return "", "", canvas.NotFound("workflow run")
	}
	return runID, status, err
}

// SaveWorkflowSteps writes steps of a run that has not ended; a run that
// has is CONFLICT and nothing is written. The run is found as
// GetWorkflowRun finds it. Concurrent calls may share commits (the
// Workflows group), each returning once its write is durable.
func (s *Store) SaveWorkflowSteps(ctx context.Context, workspaceID, runID string, steps []*workflow.Step) error {
	if len(steps) == 0 {
		return nil
	}
	return s.write(ctx, Workflows, func(ctx context.Context, tx *Tx) error {
		id, status, err := s.workflowRunStatus(ctx, tx, workspaceID, runID)
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
func (s *Store) ChangeWorkflowRun(ctx context.Context, c *workflow.Change) (*workflow.Run, error) {
	if c.To == "" {
		return nil, canvas.Invalid("A change needs a status to move to.", canvas.Detail{Path: "/to", Message: "required"})
	}
	var out *workflow.Run
	err := s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		id, status, err := s.workflowRunStatus(ctx, tx, c.WorkspaceID, c.RunID)
		if err != nil {
			return err
		}
		if status != c.From {
			return canvas.Errorf(canvas.ECONFLICT, "The workflow run is %s, not %s.", status, c.From)
		}
		var set setList
		set.add("status", c.To)
		set.add("updated_at", tx.Now)
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
			set.add("completed_at", tx.Now)
		}
		if _, err := tx.Exec(ctx, `UPDATE workflow_runs SET `+set.sql()+` WHERE id = ?`, append(set.args, id)...); err != nil {
			return err
		}
		if err := upsertWorkflowSteps(ctx, tx, id, c.Steps); err != nil {
			return err
		}
		if len(c.CancelKinds) > 0 {
			if _, err := tx.Exec(ctx, s.d.cancelRunJobs(), tx.Now, id, IDs(c.CancelKinds), c.ExceptJobID); err != nil {
				return err
			}
		}
		if err := s.insertWorkflowJobs(ctx, tx, c.WorkspaceID, id, c.Jobs); err != nil {
			return err
		}
		if err := s.insertDeliveries(ctx, tx, c.Notify); err != nil {
			return err
		}
		out, err = getWorkflowRunTx(ctx, tx, c.WorkspaceID, id)
		return err
	})
	return out, err
}

// ListWorkflowRuns returns one page of the workspace's runs that f
// selects, without their steps, newest first (the order of insertion
// breaks ties between runs created at the same instant: SQLite's rowid,
// Postgres's seq), and how many f selects in all, read in one snapshot.
// The index workflow_runs_canvas serves a canvas's runs in order, and
// workflow_runs_workspace the runs of every canvas.
func (s *Store) ListWorkflowRuns(ctx context.Context, workspaceID string, f workflow.RunFilter) ([]*workflow.Run, int, error) {
	where := `workspace_id = ?`
	args := []any{workspaceID}
	for _, c := range []struct{ col, v string }{{"canvas_id", f.CanvasID}, {"version_id", f.VersionID}, {"status", f.Status}} {
		if c.v != "" {
			where += ` AND ` + c.col + ` = ?`
			args = append(args, c.v)
		}
	}
	where += createdWithin(&args, "created_at", f.Since, f.Until)
	if f.Reach != nil {
		where += ` AND ` + s.d.reachSQL(&args, `workflow_runs.canvas_id`, *f.Reach)
	}
	order := `created_at DESC, rowid DESC`
	if s.d.Postgres {
		order = `created_at DESC, seq DESC`
	}
	return listPage(ctx, s, listQuery{cols: workflowRunCols, from: `workflow_runs`, where: where, args: args,
		order: order, limit: f.Limit, offset: f.Offset}, func(r Rows) (*workflow.Run, error) { return scanWorkflowRun(r) })
}
