package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/experiment"
	"github.com/promptcanvas/promptcanvas/queue"
)

// Compile-time check that Store implements the experiment store.
var _ experiment.Store = (*Store)(nil)

// experimentCols are the columns scanExperiment reads, in order; the last
// counts the experiment's results.
const experimentCols = `e.id, e.workspace_id, e.prompt_id, e.status, e.request, e.test_case_ids, e.versions, e.total,
	e.runner, e.error, e.created_by, e.created_at, e.updated_at, e.started_at, e.completed_at,
	(SELECT COUNT(*) FROM experiment_results r WHERE r.experiment_id = e.id)`

// qGetExperiment reads an experiment by workspace and id.
const qGetExperiment = `SELECT ` + experimentCols + ` FROM experiments e WHERE e.workspace_id = ? AND e.id = ?`

// liveExperiment is the condition of an experiment that has not ended.
const liveExperiment = `status IN ('queued', 'running')`

func scanExperiment(r Row) (*experiment.Experiment, error) {
	var e experiment.Experiment
	err := r.Scan(&e.ID, &e.WorkspaceID, &e.PromptID, &e.Status, jsonCol{&e.Request}, jsonCol{&e.TestCaseIDs},
		jsonCol{&e.Versions}, &e.Progress.Total, jsonCol{&e.Runner}, jsonCol{&e.Error}, &e.CreatedBy, &e.CreatedAt,
		&e.UpdatedAt, &e.StartedAt, &e.CompletedAt, &e.Progress.Done)
	return &e, err
}

func oneExperiment(r Row) (*experiment.Experiment, error) {
	e, err := scanExperiment(r)
	if errors.Is(err, ErrNoRows) {
		return nil, canvas.NotFound("experiment")
	}
	return e, err
}

// CreateExperiment inserts e, queued, and its job, in one transaction.
func (s *Store) CreateExperiment(ctx context.Context, e *experiment.Experiment, job *queue.Job) error {
	request, err := jsonText(e.Request)
	if err != nil {
		return err
	}
	cases, err := jsonText(orEmpty(e.TestCaseIDs))
	if err != nil {
		return err
	}
	versions, err := jsonText(orEmpty(e.Versions))
	if err != nil {
		return err
	}
	runner, err := jsonText(e.Runner)
	if err != nil {
		return err
	}
	return s.writeAudited(ctx, Alone, changeOf("experiment.create", auditExperiment, e.WorkspaceID, &e.ID), func(ctx context.Context, tx *Tx) error {
		if e.ID == "" {
			e.ID = tx.NewID()
		}
		e.Status, e.CreatedAt, e.UpdatedAt, e.Progress.Done = experiment.StatusQueued, tx.Now, tx.Now, 0
		e.StartedAt, e.CompletedAt, e.Error = nil, nil, nil
		if _, err := tx.Exec(ctx, `INSERT INTO experiments (id, workspace_id, prompt_id, status, request, test_case_ids,
			versions, total, runner, created_by, created_at, updated_at, secrets_key_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.ID, e.WorkspaceID, e.PromptID, e.Status, request, cases, versions, e.Progress.Total, runner, e.CreatedBy,
			tx.Now, tx.Now, nullString(experiment.SecretsKey(e.Request.Evaluators...))); err != nil {
			return err
		}
		job.RefID = e.ID
		return s.insertJob(ctx, tx, job)
	})
}

// GetExperiment returns an experiment of the workspace.
func (s *Store) GetExperiment(ctx context.Context, workspaceID, id string) (*experiment.Experiment, error) {
	return getOne(ctx, s, "experiment", scanExperiment, qGetExperiment, workspaceID, id)
}

// ListExperiments returns one page of a canvas's experiments, newest
// first.
func (s *Store) ListExperiments(ctx context.Context, q experiment.ListQuery) ([]*experiment.Experiment, int, error) {
	return listPage(ctx, s, listQuery{cols: experimentCols, from: `experiments e`,
		where: `e.workspace_id = ? AND e.prompt_id = ?`, args: []any{q.WorkspaceID, q.PromptID},
		order: `e.created_at DESC, e.id DESC`, limit: q.Limit, offset: q.Offset},
		func(r Rows) (*experiment.Experiment, error) { return scanExperiment(r) })
}

// StartExperiment moves a queued experiment to running with versions.
func (s *Store) StartExperiment(ctx context.Context, workspaceID, id string, versions []experiment.Version) (*experiment.Experiment, error) {
	text, err := jsonText(orEmpty(versions))
	if err != nil {
		return nil, err
	}
	var e *experiment.Experiment
	err = s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		var err error
		if _, err = tx.Exec(ctx, `UPDATE experiments SET status = ?, versions = ?, started_at = ?, updated_at = ?
			WHERE workspace_id = ? AND id = ? AND status = ?`, experiment.StatusRunning, text, tx.Now, tx.Now,
			workspaceID, id, experiment.StatusQueued); err != nil {
			return err
		}
		if e, err = oneExperiment(tx.QueryRow(ctx, qGetExperiment, workspaceID, id)); err != nil {
			return err
		}
		if e.Terminal() {
			return canvas.Errorf(canvas.ECONFLICT, "The experiment has ended.")
		}
		return nil
	})
	return e, err
}

// FinishExperiment ends a queued or running experiment, with the job its
// outbox returns.
func (s *Store) FinishExperiment(ctx context.Context, p experiment.FinishParams, outbox func(*experiment.Experiment) (*queue.Job, error)) (*experiment.Experiment, error) {
	if p.Status != experiment.StatusCompleted && p.Status != experiment.StatusFailed {
		return nil, canvas.Errorf(canvas.EINVALID, "FinishExperiment needs status completed or failed, not %q.", p.Status)
	}
	why, err := jsonOrNull(p.Error, p.Error == nil)
	if err != nil {
		return nil, err
	}
	return s.endExperiment(ctx, p.WorkspaceID, p.ID, p.Status, why, outbox, nil)
}

// CancelExperiment cancels a queued or running experiment and its jobs.
func (s *Store) CancelExperiment(ctx context.Context, workspaceID, id string, outbox func(*experiment.Experiment) (*queue.Job, error)) (*experiment.Experiment, error) {
	c := changeOf("experiment.cancel", auditExperiment, workspaceID, &id)
	return s.endExperiment(ctx, workspaceID, id, experiment.StatusCancelled, nil, outbox, &c)
}

// endExperiment moves a live experiment to status, cancels its jobs, and
// writes the job outbox returns, in one transaction; an ended one is
// CONFLICT. A cancel is a change c that the audit log records.
func (s *Store) endExperiment(ctx context.Context, workspaceID, id, status string, why any, outbox func(*experiment.Experiment) (*queue.Job, error), c *change) (*experiment.Experiment, error) {
	var e *experiment.Experiment
	err := s.writeChange(ctx, Alone, c, func(ctx context.Context, tx *Tx) error {
		n, err := tx.Exec(ctx, `UPDATE experiments SET status = ?, error = ?, updated_at = ?, completed_at = ?
			WHERE workspace_id = ? AND id = ? AND `+liveExperiment, status, why, tx.Now, tx.Now, workspaceID, id)
		if err != nil {
			return err
		}
		if e, err = oneExperiment(tx.QueryRow(ctx, qGetExperiment, workspaceID, id)); err != nil {
			return err
		}
		if n != 1 {
			return canvas.Errorf(canvas.ECONFLICT, "The experiment has ended.")
		}
		if status == experiment.StatusCancelled {
			if _, err := cancelJobs(ctx, tx, id); err != nil {
				return err
			}
		}
		if outbox != nil {
			job, err := outbox(e)
			if err != nil {
				return err
			}
			if job != nil {
				return s.insertJob(ctx, tx, job)
			}
		}
		return nil
	})
	return e, err
}

// resultCols are the columns scanResult reads, in order; the output
// column is named apart, as a list of totals leaves it out.
const resultCols = `id, workspace_id, experiment_id, test_case_id, version_id, repetition, run_id, latency_ms, usage,
	cost, scores, verdict, error, annotation, created_at, updated_at`

func scanResult(r Row) (*experiment.Result, error) {
	var res experiment.Result
	err := r.Scan(&res.ID, &res.WorkspaceID, &res.ExperimentID, &res.TestCaseID, &res.VersionID, &res.Repetition,
		&res.RunID, &res.LatencyMs, jsonCol{&res.Usage}, jsonCol{&res.Cost}, jsonCol{&res.Scores}, &res.Verdict,
		jsonCol{&res.Error}, jsonCol{&res.Annotation}, &res.CreatedAt, &res.UpdatedAt, &res.Output)
	if err != nil {
		return nil, err
	}
	res.Passed = res.Verdict
	if res.Annotation != nil {
		p := res.Annotation.Passed
		res.Passed = &p
	}
	return &res, nil
}

// CreateResult writes r once, while its experiment runs.
func (s *Store) CreateResult(ctx context.Context, r *experiment.Result) (bool, error) {
	usage, err := jsonText(r.Usage)
	if err != nil {
		return false, err
	}
	cost, err := jsonOrNull(r.Cost, r.Cost == nil)
	if err != nil {
		return false, err
	}
	scores, err := jsonText(orEmpty(r.Scores))
	if err != nil {
		return false, err
	}
	why, err := jsonOrNull(r.Error, r.Error == nil)
	if err != nil {
		return false, err
	}
	var verdict any
	if r.Verdict != nil {
		verdict = *r.Verdict
	}
	written := false
	var at time.Time
	err = s.write(ctx, Runs, func(ctx context.Context, tx *Tx) error {
		written = false
		var status string
		err := tx.QueryRow(ctx, `SELECT status FROM experiments WHERE workspace_id = ? AND id = ?`+s.d.ForShare(),
			r.WorkspaceID, r.ExperimentID).Scan(&status)
		if errors.Is(err, ErrNoRows) {
			return canvas.NotFound("experiment")
		} else if err != nil {
			return err
		}
		if status != experiment.StatusRunning {
			return canvas.Errorf(canvas.ECONFLICT, "The experiment is %s, not running.", status)
		}
		if r.ID == "" {
			r.ID = tx.NewID()
		}
		n, err := tx.Exec(ctx, `INSERT INTO experiment_results (id, workspace_id, experiment_id, test_case_id, version_id,
			repetition, run_id, output, latency_ms, usage, cost, scores, verdict, error, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (experiment_id, test_case_id, version_id, repetition) DO NOTHING`,
			r.ID, r.WorkspaceID, r.ExperimentID, r.TestCaseID, r.VersionID, r.Repetition, nullString(r.RunID),
			nullString(r.Output), r.LatencyMs, usage, cost, scores, verdict, why, tx.Now, tx.Now)
		written, at = n == 1, tx.Now
		return err
	})
	if err != nil {
		return false, err
	}
	if written {
		r.CreatedAt, r.UpdatedAt = at, at
	}
	return written, nil
}

// ListResults returns the results q selects, in the order written.
func (s *Store) ListResults(ctx context.Context, q experiment.ResultQuery) ([]*experiment.Result, int, error) {
	output := `output`
	if q.WithoutOutput {
		output = `NULL`
	}
	where := `workspace_id = ? AND experiment_id = ?`
	args := []any{q.WorkspaceID, q.ExperimentID}
	if len(q.VersionIDs) > 0 {
		where += ` AND ` + s.d.InIDs("version_id")
		args = append(args, IDs(q.VersionIDs))
	}
	if q.TestCaseID != "" {
		where += ` AND test_case_id = ?`
		args = append(args, q.TestCaseID)
	}
	lq := listQuery{cols: resultCols + `, ` + output, from: `experiment_results`, where: where, args: args,
		order: `created_at, id`, limit: q.Limit, offset: q.Offset}
	if q.Limit > 0 {
		return listPage(ctx, s, lq, func(r Rows) (*experiment.Result, error) { return scanResult(r) })
	}
	list, err := getAll(ctx, s, scanResult, `SELECT `+lq.cols+` FROM `+lq.from+` WHERE `+lq.where+` ORDER BY `+lq.order,
		lq.args...)
	return list, len(list), err
}

// AnnotateResult sets a result's annotation.
func (s *Store) AnnotateResult(ctx context.Context, p experiment.AnnotateParams) (*experiment.Result, error) {
	var res *experiment.Result
	err := s.writeAudited(ctx, Alone, changeOf("experiment-result.annotate", auditResult, p.WorkspaceID, &p.ResultID), func(ctx context.Context, tx *Tx) error {
		a := p.Annotation
		a.UpdatedAt = tx.Now
		text, err := jsonText(a)
		if err != nil {
			return err
		}
		n, err := tx.Exec(ctx, `UPDATE experiment_results SET annotation = ?, updated_at = ?
			WHERE workspace_id = ? AND experiment_id = ? AND id = ?`, text, tx.Now, p.WorkspaceID, p.ExperimentID, p.ResultID)
		if err != nil {
			return err
		}
		if n != 1 {
			return canvas.NotFound("result")
		}
		res, err = scanResult(tx.QueryRow(ctx, `SELECT `+resultCols+`, output FROM experiment_results WHERE id = ?`, p.ResultID))
		return err
	})
	return res, err
}

// evaluatorCols are the columns scanEvaluator reads, in order.
const evaluatorCols = `id, workspace_id, prompt_id, spec, created_by, created_at, updated_at`

func scanEvaluator(r Row) (*experiment.SavedEvaluator, error) {
	var e experiment.SavedEvaluator
	err := r.Scan(&e.ID, &e.WorkspaceID, &e.PromptID, jsonCol{&e.Evaluator}, &e.CreatedBy, &e.CreatedAt, &e.UpdatedAt)
	return &e, err
}

// CreateEvaluator inserts a saved evaluator; a name taken in its canvas is
// CONFLICT.
func (s *Store) CreateEvaluator(ctx context.Context, e *experiment.SavedEvaluator) error {
	return s.writeAudited(ctx, Alone, changeOf("evaluator.create", auditEvaluator, e.WorkspaceID, &e.ID), func(ctx context.Context, tx *Tx) error {
		if e.ID == "" {
			e.ID = tx.NewID()
		}
		spec, err := jsonText(e.Evaluator)
		if err != nil {
			return err
		}
		e.CreatedAt, e.UpdatedAt = tx.Now, tx.Now
		_, err = tx.Exec(ctx, `INSERT INTO evaluators (id, workspace_id, prompt_id, name, spec, created_by, created_at,
			updated_at, secrets_key_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, e.ID, e.WorkspaceID, e.PromptID, e.Name, spec,
			e.CreatedBy, tx.Now, tx.Now, nullString(experiment.SecretsKey(e.Evaluator)))
		if canvas.ErrorCode(err) == canvas.ECONFLICT {
			return canvas.Errorf(canvas.ECONFLICT, "The canvas has an evaluator named %q already.", e.Name)
		}
		return err
	})
}

// GetEvaluator returns a saved evaluator of the workspace.
func (s *Store) GetEvaluator(ctx context.Context, workspaceID, id string) (*experiment.SavedEvaluator, error) {
	return getOne(ctx, s, "evaluator", scanEvaluator, `SELECT `+evaluatorCols+` FROM evaluators
		WHERE workspace_id = ? AND id = ?`, workspaceID, id)
}

// ListEvaluators returns one page of a canvas's saved evaluators, by name.
func (s *Store) ListEvaluators(ctx context.Context, workspaceID string, q experiment.EvaluatorQuery) ([]*experiment.SavedEvaluator, int, error) {
	return listPage(ctx, s, listQuery{cols: evaluatorCols, from: `evaluators`, where: `workspace_id = ? AND prompt_id = ?`,
		args: []any{workspaceID, q.PromptID}, order: `name, id`, limit: q.Limit, offset: q.Offset},
		func(r Rows) (*experiment.SavedEvaluator, error) { return scanEvaluator(r) })
}

// SealedEvaluators returns, across every workspace, at most limit saved
// evaluators whose secrets are in clear or sealed under another key than
// keyID, with ids after afterID, by id.
func (s *Store) SealedEvaluators(ctx context.Context, keyID, afterID string, limit int) ([]*experiment.SavedEvaluator, error) {
	return getAll(ctx, s, scanEvaluator, `SELECT `+evaluatorCols+` FROM evaluators
		WHERE secrets_key_id IS NOT NULL AND secrets_key_id <> ? AND id > ? ORDER BY id LIMIT ?`, keyID, afterID, limit)
}

// ResealEvaluator replaces a saved evaluator's spec by e's unless its
// secrets key is no longer oldKeyID. The spec's secret is all that
// changes, so the audit log is not written.
func (s *Store) ResealEvaluator(ctx context.Context, e *experiment.SavedEvaluator, oldKeyID string) (bool, error) {
	spec, err := jsonText(e.Evaluator)
	if err != nil {
		return false, err
	}
	var n int64
	err = s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		n, err = tx.Exec(ctx, `UPDATE evaluators SET spec = ?, secrets_key_id = ?
			WHERE workspace_id = ? AND id = ? AND secrets_key_id = ?`,
			spec, nullString(experiment.SecretsKey(e.Evaluator)), e.WorkspaceID, e.ID, oldKeyID)
		return err
	})
	return n == 1, err
}

// SealedExperiments returns, across every workspace, at most limit
// experiments whose evaluators' secrets are in clear or sealed under
// another key than keyID, with ids after afterID, by id.
func (s *Store) SealedExperiments(ctx context.Context, keyID, afterID string, limit int) ([]*experiment.Experiment, error) {
	return getAll(ctx, s, scanExperiment, `SELECT `+experimentCols+` FROM experiments e
		WHERE e.secrets_key_id IS NOT NULL AND e.secrets_key_id <> ? AND e.id > ? ORDER BY e.id LIMIT ?`,
		keyID, afterID, limit)
}

// ResealExperiment replaces an experiment's request by e's unless its
// secrets key is no longer oldKeyID; as for ResealEvaluator, the audit
// log is not written.
func (s *Store) ResealExperiment(ctx context.Context, e *experiment.Experiment, oldKeyID string) (bool, error) {
	request, err := jsonText(e.Request)
	if err != nil {
		return false, err
	}
	var n int64
	err = s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		n, err = tx.Exec(ctx, `UPDATE experiments SET request = ?, secrets_key_id = ?
			WHERE workspace_id = ? AND id = ? AND secrets_key_id = ?`,
			request, nullString(experiment.SecretsKey(e.Request.Evaluators...)), e.WorkspaceID, e.ID, oldKeyID)
		return err
	})
	return n == 1, err
}
