package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

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
const qGetGeneration = `SELECT ` + generationCols + ` FROM generations WHERE workspace_id = $1 AND id = $2`

func scanGeneration(r scanner) (*testcase.Generation, error) {
	var g testcase.Generation
	err := r.Scan(&g.ID, &g.WorkspaceID, &g.TestCaseID, &g.PromptID, &g.PromptVersionID, &g.ExecutionID,
		&g.Status, &g.Output, jsonCol{&g.Error}, jsonCol{&g.Usage}, &g.LatencyMs, &g.Passed,
		&g.CreatedAt, &g.UpdatedAt, &g.CompletedAt)
	return &g, err
}

// CreateGenerations inserts gens, initializing, and jobs[i] serving gens[i],
// in one transaction.
func (db *DB) CreateGenerations(ctx context.Context, gens []*testcase.Generation, jobs []*queue.Job) error {
	if len(jobs) != len(gens) {
		return canvas.Errorf(canvas.EINVALID, "Each generation needs its job: %d generations, %d jobs.", len(gens), len(jobs))
	}
	return db.write(ctx, func(tx *Tx) error {
		for i, g := range gens {
			if g.ID == "" {
				g.ID = tx.db.NewID()
			}
			g.Status, g.CreatedAt, g.UpdatedAt = testcase.GenerationInitializing, tx.now, tx.now
			g.Output, g.Error, g.Usage, g.LatencyMs, g.Passed, g.CompletedAt = nil, nil, nil, nil, nil, nil
			if _, err := tx.Exec(ctx, `INSERT INTO generations (id, workspace_id, test_case_id, prompt_id,
				prompt_version_id, execution_id, status, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
				g.ID, g.WorkspaceID, g.TestCaseID, g.PromptID, g.PromptVersionID, g.ExecutionID, g.Status,
				tx.now); err != nil {
				return translate(err)
			}
			jobs[i].RefID = g.ID
			if err := insertJob(ctx, tx, jobs[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// GetGeneration returns a generation of the workspace.
func (db *DB) GetGeneration(ctx context.Context, workspaceID, id string) (*testcase.Generation, error) {
	return oneGeneration(db.pool.QueryRow(ctx, qGetGeneration, workspaceID, id))
}

func oneGeneration(r pgx.Row) (*testcase.Generation, error) {
	g, err := scanGeneration(r)
	if errors.Is(err, pgx.ErrNoRows) {
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
	q := `SELECT ` + generationCols + ` FROM generations WHERE workspace_id = $1 AND test_case_id = ANY($2)`
	args := []any{f.WorkspaceID, f.TestCaseIDs}
	if len(f.PromptVersionIDs) > 0 {
		q += ` AND prompt_version_id = ANY($3)`
		args = append(args, f.PromptVersionIDs)
	}
	q += ` ORDER BY created_at DESC, id DESC`
	rows, err := db.pool.Query(ctx, q, args...)
	gens, err := rowsOf(rows, err, func(r pgx.Rows) (*testcase.Generation, error) { return scanGeneration(r) })
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
	var g *testcase.Generation
	err := db.write(ctx, func(tx *Tx) error {
		var err error
		g, err = oneGeneration(tx.QueryRow(ctx, qGetGeneration+` FOR UPDATE`, workspaceID, id))
		if err != nil {
			return err
		}
		if g.Terminal() {
			return canvas.Errorf(canvas.ECONFLICT, "The generation has already finished.")
		}
		if _, err := tx.Exec(ctx, `UPDATE generations SET status = $1, updated_at = $2 WHERE id = $3`,
			testcase.GenerationRunning, tx.now, id); err != nil {
			return err
		}
		g.Status, g.UpdatedAt = testcase.GenerationRunning, tx.now
		return nil
	})
	return g, err
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
	var now time.Time
	err = db.write(ctx, func(tx *Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE generations SET status = $1, output = $2, error = $3, usage = $4, latency_ms = $5,
			passed = $6, updated_at = $7, completed_at = $7 WHERE workspace_id = $8 AND id = $9 AND `+live,
			g.Status, g.Output, genErr, usage, g.LatencyMs, g.Passed, tx.now, g.WorkspaceID, g.ID)
		if err := changedOne(ctx, tx, tag.RowsAffected(), err, g.WorkspaceID, g.ID); err != nil {
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
		now = tx.now
		return nil
	})
	if err != nil {
		return err
	}
	g.UpdatedAt, g.CompletedAt = now, &now
	return nil
}

// AbortGeneration moves a live generation to aborted and cancels its jobs,
// in one transaction; a terminal one is CONFLICT.
func (db *DB) AbortGeneration(ctx context.Context, workspaceID, id string) (*testcase.Generation, error) {
	var g *testcase.Generation
	err := db.write(ctx, func(tx *Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE generations SET status = $1, updated_at = $2, completed_at = $2
			WHERE workspace_id = $3 AND id = $4 AND `+live, testcase.GenerationAborted, tx.now, workspaceID, id)
		if err := changedOne(ctx, tx, tag.RowsAffected(), err, workspaceID, id); err != nil {
			return err
		}
		if _, err := cancelJobs(ctx, tx, id); err != nil {
			return err
		}
		g, err = oneGeneration(tx.QueryRow(ctx, qGetGeneration, workspaceID, id))
		return err
	})
	return g, err
}

// GetExecution summarises the generations of an execution of the
// workspace; an execution without generations is NOT_FOUND.
func (db *DB) GetExecution(ctx context.Context, workspaceID, executionID string) (*testcase.Execution, error) {
	rows, err := db.pool.Query(ctx, `SELECT prompt_id, prompt_version_id, status, passed, COUNT(*),
		MIN(created_at) FROM generations WHERE workspace_id = $1 AND execution_id = $2
		GROUP BY prompt_id, prompt_version_id, status, passed`, workspaceID, executionID)
	type group struct {
		promptID, versionID, status string
		passed                      *bool
		n                           int
		created                     time.Time
	}
	groups, err := rowsOf(rows, err, func(r pgx.Rows) (group, error) {
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
		PromptID: groups[0].promptID, PromptVersionID: groups[0].versionID, CreatedAt: groups[0].created}
	for _, g := range groups {
		if g.created.Before(e.CreatedAt) {
			e.CreatedAt = g.created
		}
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
		if g.passed != nil && *g.passed {
			e.Passed += g.n
		} else if g.passed != nil {
			e.Failed += g.n
		}
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
func changedOne(ctx context.Context, tx *Tx, n int64, err error, workspaceID, id string) error {
	if err != nil {
		return err
	} else if n == 1 {
		return nil
	}
	if _, err := oneGeneration(tx.QueryRow(ctx, qGetGeneration, workspaceID, id)); err != nil {
		return err
	}
	return canvas.Errorf(canvas.ECONFLICT, "The generation has already finished.")
}
