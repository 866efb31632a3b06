package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/testcase"
)

// Compile-time check that DB implements the generation store.
var _ testcase.GenerationStore = (*DB)(nil)

// generationCols are the columns scanGeneration reads, in order.
const generationCols = `id, workspace_id, test_case_id, prompt_id, prompt_version_id, execution_id, status,
	output, error, usage, latency_ms, passed, created_at, updated_at, completed_at`

// qGetGeneration reads a generation by workspace and id.
const qGetGeneration = `SELECT ` + generationCols + ` FROM generations WHERE workspace_id = ? AND id = ?`

func scanGeneration(r interface{ Scan(...any) error }) (*testcase.Generation, error) {
	var g testcase.Generation
	var output sql.NullString
	var latency sql.NullInt64
	var passed sql.NullBool
	err := r.Scan(&g.ID, &g.WorkspaceID, &g.TestCaseID, &g.PromptID, &g.PromptVersionID, &g.ExecutionID,
		&g.Status, &output, jsonCol{&g.Error}, jsonCol{&g.Usage}, &latency, &passed,
		timeCol{&g.CreatedAt}, timeCol{&g.UpdatedAt}, nullTimeCol{&g.CompletedAt})
	if output.Valid {
		g.Output = &output.String
	}
	if latency.Valid {
		g.LatencyMs = &latency.Int64
	}
	if passed.Valid {
		g.Passed = &passed.Bool
	}
	return &g, err
}

// CreateGenerations inserts gens, initializing, and jobs[i] serving gens[i],
// in one transaction.
func (db *DB) CreateGenerations(ctx context.Context, gens []*testcase.Generation, jobs []*queue.Job) error {
	if len(jobs) != len(gens) {
		return canvas.Errorf(canvas.EINVALID, "Each generation needs its job: %d generations, %d jobs.", len(gens), len(jobs))
	}
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for i, g := range gens {
		if g.ID == "" {
			g.ID = tx.db.NewID()
		}
		g.Status, g.CreatedAt, g.UpdatedAt = testcase.GenerationInitializing, tx.now, tx.now
		g.Output, g.Error, g.Usage, g.LatencyMs, g.Passed, g.CompletedAt = nil, nil, nil, nil, nil, nil
		if _, err := tx.exec(ctx, `INSERT INTO generations (id, workspace_id, test_case_id, prompt_id,
			prompt_version_id, execution_id, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			g.ID, g.WorkspaceID, g.TestCaseID, g.PromptID, g.PromptVersionID, g.ExecutionID, g.Status,
			formatTime(tx.now), formatTime(tx.now)); err != nil {
			return translate(err)
		}
		jobs[i].RefID = g.ID
		if err := insertJob(ctx, tx, jobs[i]); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// GetGeneration returns a generation of the workspace.
func (db *DB) GetGeneration(ctx context.Context, workspaceID, id string) (*testcase.Generation, error) {
	return oneGeneration(db.read.QueryRowContext(ctx, qGetGeneration, workspaceID, id))
}

func oneGeneration(r *sql.Row) (*testcase.Generation, error) {
	g, err := scanGeneration(r)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, canvas.NotFound("generation")
	}
	return g, err
}

// ListGenerations returns the generations of f's test cases, keyed by test
// case id, newest first within each; a test case without any has no key.
func (db *DB) ListGenerations(ctx context.Context, f testcase.GenerationFilter) (map[string][]*testcase.Generation, error) {
	out := map[string][]*testcase.Generation{}
	if len(f.TestCaseIDs) == 0 {
		return out, nil
	}
	q := `SELECT ` + generationCols + ` FROM generations WHERE workspace_id = ?
		AND test_case_id IN (SELECT value FROM json_each(?))`
	args := []any{f.WorkspaceID, idList(f.TestCaseIDs)}
	if len(f.PromptVersionIDs) > 0 {
		q += ` AND prompt_version_id IN (SELECT value FROM json_each(?))`
		args = append(args, idList(f.PromptVersionIDs))
	}
	q += ` ORDER BY created_at DESC, id DESC`
	rows, err := db.read.QueryContext(ctx, q, args...)
	gens, err := rowsOf(rows, err, func(r *sql.Rows) (*testcase.Generation, error) { return scanGeneration(r) })
	if err != nil {
		return nil, err
	}
	for _, g := range gens {
		out[g.TestCaseID] = append(out[g.TestCaseID], g)
	}
	return out, nil
}

// live is the condition of a generation that has not finished.
const live = `status IN ('initializing', 'running')`

// StartGeneration moves an initializing or running generation to running;
// a terminal one is CONFLICT.
func (db *DB) StartGeneration(ctx context.Context, workspaceID, id string) (*testcase.Generation, error) {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	g, err := oneGeneration(tx.queryRow(ctx, qGetGeneration, workspaceID, id))
	if err != nil {
		return nil, err
	}
	if g.Terminal() {
		return nil, canvas.Errorf(canvas.ECONFLICT, "The generation has already finished.")
	}
	if _, err := tx.exec(ctx, `UPDATE generations SET status = ?, updated_at = ? WHERE id = ?`,
		testcase.GenerationRunning, formatTime(tx.now), id); err != nil {
		return nil, err
	}
	g.Status, g.UpdatedAt = testcase.GenerationRunning, tx.now
	return g, tx.Commit()
}

// FinishGeneration writes g's final state when the stored generation is
// still initializing or running, and the job outbox returns for it, in one
// transaction; otherwise it is CONFLICT.
func (db *DB) FinishGeneration(ctx context.Context, g *testcase.Generation, outbox func(*testcase.Generation) (*queue.Job, error)) error {
	if g.Status != testcase.GenerationCompleted && g.Status != testcase.GenerationFailed {
		return canvas.Errorf(canvas.EINVALID, "FinishGeneration needs status completed or failed, not %q.", g.Status)
	}
	genErr, err := jsonOrNull(g.Error, g.Error == nil)
	if err != nil {
		return err
	}
	usage, err := jsonOrNull(g.Usage, g.Usage == nil)
	if err != nil {
		return err
	}
	var latency, passed any
	if g.LatencyMs != nil {
		latency = *g.LatencyMs
	}
	if g.Passed != nil {
		passed = *g.Passed
	}
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.exec(ctx, `UPDATE generations SET status = ?, output = ?, error = ?, usage = ?, latency_ms = ?,
		passed = ?, updated_at = ?, completed_at = ? WHERE workspace_id = ? AND id = ? AND `+live,
		g.Status, nullString(g.Output), genErr, usage, latency, passed, formatTime(tx.now), formatTime(tx.now),
		g.WorkspaceID, g.ID)
	if err := changedOne(ctx, tx, res, err, g.WorkspaceID, g.ID); err != nil {
		return err
	}
	written := *g
	written.UpdatedAt, written.CompletedAt = tx.now, &tx.now
	if outbox != nil {
		job, err := outbox(&written)
		if err != nil {
			return err
		}
		if job != nil {
			if err := insertJob(ctx, tx, job); err != nil {
				return err
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	g.UpdatedAt, g.CompletedAt = written.UpdatedAt, written.CompletedAt
	return nil
}

// AbortGeneration moves a live generation to aborted and cancels its jobs,
// in one transaction; a terminal one is CONFLICT.
func (db *DB) AbortGeneration(ctx context.Context, workspaceID, id string) (*testcase.Generation, error) {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	now := formatTime(tx.now)
	res, err := tx.exec(ctx, `UPDATE generations SET status = ?, updated_at = ?, completed_at = ?
		WHERE workspace_id = ? AND id = ? AND `+live, testcase.GenerationAborted, now, now, workspaceID, id)
	if err := changedOne(ctx, tx, res, err, workspaceID, id); err != nil {
		return nil, err
	}
	if _, err := cancelJobs(ctx, tx, id); err != nil {
		return nil, err
	}
	g, err := oneGeneration(tx.queryRow(ctx, qGetGeneration, workspaceID, id))
	if err != nil {
		return nil, err
	}
	return g, tx.Commit()
}

// GetExecution summarises the generations of an execution of the
// workspace; an execution without generations is NOT_FOUND.
func (db *DB) GetExecution(ctx context.Context, workspaceID, executionID string) (*testcase.Execution, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT prompt_id, prompt_version_id, status, passed, COUNT(*),
		MIN(created_at) FROM generations WHERE workspace_id = ? AND execution_id = ?
		GROUP BY prompt_id, prompt_version_id, status, passed`, workspaceID, executionID)
	type group struct {
		promptID, versionID, status string
		passed                      sql.NullBool
		n                           int
		created                     string
	}
	groups, err := rowsOf(rows, err, func(r *sql.Rows) (group, error) {
		var g group
		return g, r.Scan(&g.promptID, &g.versionID, &g.status, &g.passed, &g.n, &g.created)
	})
	if err != nil {
		return nil, err
	}
	if len(groups) == 0 {
		return nil, canvas.NotFound("execution")
	}
	e := &testcase.Execution{ExecutionID: executionID, WorkspaceID: workspaceID,
		PromptID: groups[0].promptID, PromptVersionID: groups[0].versionID}
	created := groups[0].created
	for _, g := range groups {
		created = min(created, g.created)
		e.Total += g.n
		switch g.status {
		case testcase.GenerationInitializing:
			e.Counts.Initializing += g.n
		case testcase.GenerationRunning:
			e.Counts.Running += g.n
		case testcase.GenerationCompleted:
			e.Counts.Completed += g.n
		case testcase.GenerationFailed:
			e.Counts.Failed += g.n
		case testcase.GenerationAborted:
			e.Counts.Aborted += g.n
		}
		if g.passed.Valid && g.passed.Bool {
			e.Passed += g.n
		} else if g.passed.Valid {
			e.Failed += g.n
		}
	}
	if e.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	if graded := e.Passed + e.Failed; graded > 0 {
		rate := float64(e.Passed) / float64(graded)
		e.PassRate = &rate
	}
	return e, nil
}

// changedOne checks that an UPDATE of generation id changed one row: when
// it changed none the generation is NOT_FOUND if it does not exist and
// CONFLICT (it has already finished) otherwise.
func changedOne(ctx context.Context, tx *Tx, res sql.Result, err error, workspaceID, id string) error {
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 1 {
		return nil
	}
	if _, err := oneGeneration(tx.queryRow(ctx, qGetGeneration, workspaceID, id)); err != nil {
		return err
	}
	return canvas.Errorf(canvas.ECONFLICT, "The generation has already finished.")
}
