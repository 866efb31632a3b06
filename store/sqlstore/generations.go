package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/testcase"
)

// Compile-time check that Store implements the generation store.
var _ testcase.GenerationStore = (*Store)(nil)

// generationCols are the columns scanGeneration reads, in order.
const generationCols = `id, workspace_id, test_case_id, prompt_id, prompt_version_id, execution_id, status,
	output, error, usage, latency_ms, passed, created_at, updated_at, completed_at, cost`

// qGetGeneration reads a generation by workspace and id.
const qGetGeneration = `SELECT ` + generationCols + ` FROM generations WHERE workspace_id = ? AND id = ?`

// liveGeneration is the condition of a generation that has not finished.
const liveGeneration = `status IN ('initializing', 'running')`

func scanGeneration(r Row) (*testcase.Generation, error) {
	var g testcase.Generation
	err := r.Scan(&g.ID, &g.WorkspaceID, &g.TestCaseID, &g.PromptID, &g.PromptVersionID, &g.ExecutionID,
		&g.Status, &g.Output, jsonCol{&g.Error}, jsonCol{&g.Usage}, &g.LatencyMs, &g.Passed,
		&g.CreatedAt, &g.UpdatedAt, &g.CompletedAt, jsonCol{&g.Cost})
	return &g, err
}

func oneGeneration(r Row) (*testcase.Generation, error) {
	g, err := scanGeneration(r)
	if errors.Is(err, ErrNoRows) {
		return nil, canvas.NotFound("generation")
	}
	return g, err
}

// CreateGenerations inserts gens, initializing, and jobs[i] serving gens[i],
// in one transaction.
func (s *Store) CreateGenerations(ctx context.Context, gens []*testcase.Generation, jobs []*queue.Job) error {
	if len(jobs) != len(gens) {
		return canvas.Errorf(canvas.EINVALID, "Each generation needs its job: %d generations, %d jobs.", len(gens), len(jobs))
	}
	return s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		for i, g := range gens {
			if g.ID == "" {
				g.ID = tx.NewID()
			}
			g.Status, g.CreatedAt, g.UpdatedAt = testcase.GenerationInitializing, tx.Now, tx.Now
			g.Output, g.Error, g.Usage, g.LatencyMs, g.Passed, g.CompletedAt = nil, nil, nil, nil, nil, nil
			g.Cost = nil
			if _, err := tx.Exec(ctx, `INSERT INTO generations (id, workspace_id, test_case_id, prompt_id,
				prompt_version_id, execution_id, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				g.ID, g.WorkspaceID, g.TestCaseID, g.PromptID, g.PromptVersionID, g.ExecutionID, g.Status,
				tx.Now, tx.Now); err != nil {
				return err
			}
			jobs[i].RefID = g.ID
			if err := s.insertJob(ctx, tx, jobs[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// GetGeneration returns a generation of the workspace.
func (s *Store) GetGeneration(ctx context.Context, workspaceID, id string) (*testcase.Generation, error) {
	var g *testcase.Generation
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		var err error
		g, err = oneGeneration(tx.QueryRow(ctx, qGetGeneration, workspaceID, id))
		return err
	})
	return g, err
}

// ListGenerations returns the generations of f's test cases, keyed by test
// case id, newest first within each; a test case without any has no key.
func (s *Store) ListGenerations(ctx context.Context, f testcase.GenerationFilter) (map[string][]*testcase.Generation, error) {
	out := map[string][]*testcase.Generation{}
	if len(f.TestCaseIDs) == 0 {
		return out, nil
	}
	q := `SELECT ` + generationCols + ` FROM generations WHERE workspace_id = ? AND ` + s.d.InIDs("test_case_id")
	args := []any{f.WorkspaceID, IDs(f.TestCaseIDs)}
	if len(f.PromptVersionIDs) > 0 {
		q += ` AND ` + s.d.InIDs("prompt_version_id")
		args = append(args, IDs(f.PromptVersionIDs))
	}
	q += ` ORDER BY created_at DESC, id DESC`
	var gens []*testcase.Generation
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		rows, err := tx.Query(ctx, q, args...)
		gens, err = RowsOf(rows, err, func(r Rows) (*testcase.Generation, error) { return scanGeneration(r) })
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, g := range gens {
		out[g.TestCaseID] = append(out[g.TestCaseID], g)
	}
	return out, nil
}

// StartGeneration moves an initializing or running generation to running;
// a terminal one is CONFLICT. The generation's row is locked as it is
// read.
func (s *Store) StartGeneration(ctx context.Context, workspaceID, id string) (*testcase.Generation, error) {
	var g *testcase.Generation
	err := s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		var err error
		g, err = oneGeneration(tx.QueryRow(ctx, qGetGeneration+s.d.ForUpdate(), workspaceID, id))
		if err != nil {
			return err
		}
		if g.Terminal() {
			return canvas.Errorf(canvas.ECONFLICT, "The generation has already finished.")
		}
		if _, err := tx.Exec(ctx, `UPDATE generations SET status = ?, updated_at = ? WHERE id = ?`,
			testcase.GenerationRunning, tx.Now, id); err != nil {
			return err
		}
		g.Status, g.UpdatedAt = testcase.GenerationRunning, tx.Now
		return nil
	})
	return g, err
}

// FinishGeneration writes g's final state when the stored generation is
// still initializing or running, and the job outbox returns for it, in one
// transaction; otherwise it is CONFLICT.
func (s *Store) FinishGeneration(ctx context.Context, g *testcase.Generation, outbox func(*testcase.Generation) (*queue.Job, error)) error {
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
	cost, err := jsonOrNull(g.Cost, g.Cost == nil)
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
	var at time.Time
	err = s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		n, err := tx.Exec(ctx, `UPDATE generations SET status = ?, output = ?, error = ?, usage = ?, cost = ?,
			latency_ms = ?, passed = ?, updated_at = ?, completed_at = ? WHERE workspace_id = ? AND id = ? AND `+liveGeneration,
			g.Status, nullString(g.Output), genErr, usage, cost, latency, passed, tx.Now, tx.Now, g.WorkspaceID, g.ID)
		if err := changedOne(ctx, tx, n, err, g.WorkspaceID, g.ID); err != nil {
			return err
		}
		written := *g
		now := tx.Now
		written.UpdatedAt, written.CompletedAt = now, &now
		if outbox != nil {
			job, err := outbox(&written)
			if err != nil {
				return err
			}
			if job != nil {
				if err := s.insertJob(ctx, tx, job); err != nil {
					return err
				}
			}
		}
		at = tx.Now
		return nil
	})
	if err != nil {
		return err
	}
	g.UpdatedAt, g.CompletedAt = at, &at
	return nil
}

// AbortGeneration moves a live generation to aborted and cancels its jobs,
// in one transaction; a terminal one is CONFLICT.
func (s *Store) AbortGeneration(ctx context.Context, workspaceID, id string) (*testcase.Generation, error) {
	var g *testcase.Generation
	err := s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		n, err := tx.Exec(ctx, `UPDATE generations SET status = ?, updated_at = ?, completed_at = ?
			WHERE workspace_id = ? AND id = ? AND `+liveGeneration, testcase.GenerationAborted, tx.Now, tx.Now,
			workspaceID, id)
		if err := changedOne(ctx, tx, n, err, workspaceID, id); err != nil {
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
func (s *Store) GetExecution(ctx context.Context, workspaceID, executionID string) (*testcase.Execution, error) {
	type group struct {
		promptID, versionID, status string
		passed                      *bool
		n                           int
		created                     time.Time
	}
	var groups []group
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		rows, err := tx.Query(ctx, `SELECT prompt_id, prompt_version_id, status, passed, COUNT(*),
			MIN(created_at) FROM generations WHERE workspace_id = ? AND execution_id = ?
			GROUP BY prompt_id, prompt_version_id, status, passed`, workspaceID, executionID)
		groups, err = RowsOf(rows, err, func(r Rows) (group, error) {
			var g group
			return g, r.Scan(&g.promptID, &g.versionID, &g.status, &g.passed, &g.n, &g.created)
		})
		return err
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
