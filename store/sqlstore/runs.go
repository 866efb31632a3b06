package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/idempotency"
	"github.com/promptcanvas/promptcanvas/model"
)

// Compile-time check that Store implements the completion package's Store.
var _ completion.Store = (*Store)(nil)

// Run records are written in the Runs group. Every sync or streamed
// completion records its run once answered, every async one its run and
// job when accepted, its start and its end; on SQLite, whose commits each
// wait for the disk, concurrent run writes therefore share commits.

// runCols are the columns scanRun reads, in order, from runs.
const runCols = `id, workspace_id, kind, canvas_id, version_id, environment_name, application_id, model,
	status, async, request, result, error, input_tokens, output_tokens, latency_ms, webhook_url,
	forward_headers, created_by, created_at, updated_at, completed_at, credential_id, provider, cost_input,
	cost_output, cost_total, variables, includes, publication_id, variant, stream`

// The statements of a run's life, which SQLite prepares at Open: its
// insert, its read by workspace and id, its start, the check that it has
// not ended yet, and its end.
const (
	QInsertRun   = `INSERT INTO runs (` + runCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	QGetRun      = `SELECT ` + runCols + ` FROM runs WHERE workspace_id = ? AND id = ?`
	QStartRun    = `UPDATE runs SET status = ?, updated_at = ? WHERE id = ?`
	QRunTerminal = `SELECT status IN ('` + completion.StatusCompleted + `', '` + completion.StatusFailed +
		`') FROM runs WHERE workspace_id = ? AND id = ?`
	QFinishRun = `UPDATE runs SET status = ?, model = ?, result = ?, error = ?, input_tokens = ?,
		output_tokens = ?, latency_ms = ?, updated_at = ?, completed_at = ?, credential_id = ?, provider = ?,
		cost_input = ?, cost_output = ?, cost_total = ? WHERE id = ?`
)

func scanRun(r Row) (*completion.Run, error) {
	var run completion.Run
	var cost [3]*float64
	var variant *int64
	err := r.Scan(&run.ID, &run.WorkspaceID, &run.Kind, &run.CanvasID, &run.VersionID, &run.EnvironmentName,
		&run.ApplicationID, &run.Model, &run.Status, &run.Async, jsonCol{&run.Request}, jsonCol{&run.Result},
		jsonCol{&run.Error}, &run.Usage.InputTokens, &run.Usage.OutputTokens, &run.LatencyMs, &run.WebhookURL,
		jsonCol{&run.ForwardHeaders}, &run.CreatedBy, &run.CreatedAt, &run.UpdatedAt, &run.CompletedAt,
		&run.CredentialID, &run.Provider, &cost[0], &cost[1], &cost[2], jsonCol{&run.Variables},
		jsonCol{&run.Includes}, &run.PublicationID, &variant, &run.Stream)
	if variant != nil {
		n := int(*variant)
		run.Variant = &n
	}
	if err == nil && cost[2] != nil {
		run.Cost = &model.Cost{Input: deref(cost[0]), Output: deref(cost[1]), Total: *cost[2], Currency: model.Currency}
	}
	return &run, err
}

// costCols returns the cost columns of c: input, output and total, NULL
// when no price was known.
func costCols(c *model.Cost) (in, out, total any) {
	if c == nil {
		return nil, nil, nil
	}
	return c.Input, c.Output, c.Total
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

// runSeq is the column of runs r that numbers them in the order of their
// insertion: SQLite's rowid, Postgres's identity column seq.
func (d Dialect) runSeq() string {
	if d.Postgres {
		return `r.seq`
	}
	return `r.rowid`
}

// runOutcome encodes r's result and error columns: JSON text, or NULL for
// none.
func runOutcome(r *completion.Run) (result, runErr any, err error) {
	if result, err = jsonOrNull(r.Result, r.Result == nil); err != nil {
		return nil, nil, err
	}
	runErr, err = jsonOrNull(r.Error, r.Error == nil)
	return result, runErr, err
}

// CreateRun inserts p.Run, p.Job when it is not nil, p.Notify's
// deliveries (insertDelivery) and the review item p.Sample takes
// (sampleRun) in one transaction, in the Runs group; it
// returns once that transaction's commit is durable. The run's id becomes
// the RefID of the idempotency reservation ctx carries, in the same
// transaction. The run's JSON columns are encoded before the write joins a
// shared commit, so that the commit's leader only binds them.
func (s *Store) CreateRun(ctx context.Context, p completion.CreateRunParams) error {
	r := p.Run
	req, err := json.Marshal(r.Request)
	if err != nil {
		return err
	}
	result, runErr, err := runOutcome(r)
	if err != nil {
		return err
	}
	headers, err := jsonOrNull(r.ForwardHeaders, len(r.ForwardHeaders) == 0)
	if err != nil {
		return err
	}
	vars, err := jsonOrNull(r.Variables, len(r.Variables) == 0)
	if err != nil {
		return err
	}
	includes, err := jsonOrNull(r.Includes, len(r.Includes) == 0)
	if err != nil {
		return err
	}
	var variant any
	if r.Variant != nil {
		variant = *r.Variant
	}
	given := r.CompletedAt
	costIn, costOut, costTotal := costCols(r.Cost)
	rec := idempotency.FromContext(ctx)
	return s.write(ctx, Runs, func(ctx context.Context, tx *Tx) error {
		if r.ID == "" {
			r.ID = tx.NewID()
		}
		r.CreatedAt, r.UpdatedAt, r.CompletedAt = tx.Now, tx.Now, nil
		if r.Terminal() {
			now := tx.Now
			r.CompletedAt = &now
		} else if given != nil {
			t := s.d.Instant(*given)
			r.CompletedAt = &t
		}
		if _, err := tx.Exec(ctx, QInsertRun, r.ID, r.WorkspaceID, r.Kind, r.CanvasID, r.VersionID,
			r.EnvironmentName, r.ApplicationID, r.Model, r.Status, r.Async, string(req), result, runErr,
			r.Usage.InputTokens, r.Usage.OutputTokens, r.LatencyMs, r.WebhookURL, headers, r.CreatedBy,
			tx.Now, tx.Now, r.CompletedAt, r.CredentialID, r.Provider, costIn, costOut, costTotal, vars, includes,
			r.PublicationID, variant, r.Stream); err != nil {
			return err
		}
		if job := p.Job; job != nil {
			if job.RefID == "" {
				job.RefID = r.ID
			}
			if err := s.insertJob(ctx, tx, job); err != nil {
				return err
			}
		}
		if err := s.insertDeliveries(ctx, tx, p.Notify); err != nil {
			return err
		}
		if p.Sample != nil {
			if err := sampleRun(ctx, tx, r, p.Sample); err != nil {
				return err
			}
		}
		return recordIdempotencyRef(ctx, tx, rec, r.ID)
	})
}

// GetRun returns a run of the workspace.
func (s *Store) GetRun(ctx context.Context, workspaceID, id string) (*completion.Run, error) {
	var r *completion.Run
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		var err error
		r, err = getRun(ctx, tx, QGetRun, workspaceID, id)
		return err
	})
	return r, err
}

// getRun reads a run with q, QGetRun or QGetRun with a lock clause.
func getRun(ctx context.Context, tx *Tx, q, workspaceID, id string) (*completion.Run, error) {
	r, err := scanRun(tx.QueryRow(ctx, q, workspaceID, id))
	if errors.Is(err, ErrNoRows) {
		return nil, canvas.NotFound("run")
	}
	return r, err
}

// StartRun moves a queued or running run to running; a terminal run is
// CONFLICT. The run's row is locked as it is read.
func (s *Store) StartRun(ctx context.Context, workspaceID, id string) (*completion.Run, error) {
	var r *completion.Run
	err := s.write(ctx, Runs, func(ctx context.Context, tx *Tx) error {
		cur, err := getRun(ctx, tx, QGetRun+s.d.ForUpdate(), workspaceID, id)
		if err != nil {
			return err
		}
		if cur.Terminal() {
			return canvas.Errorf(canvas.ECONFLICT, "The run has already finished.")
		}
		if _, err := tx.Exec(ctx, QStartRun, completion.StatusRunning, tx.Now, id); err != nil {
			return err
		}
		cur.Status, cur.UpdatedAt = completion.StatusRunning, tx.Now
		r = cur
		return nil
	})
	return r, err
}

// FinishRun writes p.Run's final state and p.Notify's deliveries
// (insertDelivery) in one transaction; a run already terminal is CONFLICT.
// The run's row is locked before its status is read, so that of two
// finishes at once, in any processes, one wins.
func (s *Store) FinishRun(ctx context.Context, p completion.FinishRunParams) error {
	r := p.Run
	if !r.Terminal() {
		return canvas.Errorf(canvas.EINVALID, "FinishRun needs a terminal status, not %q.", r.Status)
	}
	result, runErr, err := runOutcome(r)
	if err != nil {
		return err
	}
	var at time.Time
	err = s.write(ctx, Runs, func(ctx context.Context, tx *Tx) error {
		var terminal bool
		if err := tx.QueryRow(ctx, QRunTerminal+s.d.ForUpdate(), r.WorkspaceID, r.ID).Scan(&terminal); errors.Is(err, ErrNoRows) {
			return canvas.NotFound("run")
		} else if err != nil {
			return err
		}
		if terminal {
			return canvas.Errorf(canvas.ECONFLICT, "The run has already finished.")
		}
		costIn, costOut, costTotal := costCols(r.Cost)
		if _, err := tx.Exec(ctx, QFinishRun, r.Status, r.Model, result, runErr, r.Usage.InputTokens,
			r.Usage.OutputTokens, r.LatencyMs, tx.Now, tx.Now, r.CredentialID, r.Provider, costIn, costOut,
			costTotal, r.ID); err != nil {
			return err
		}
		if err := s.insertDeliveries(ctx, tx, p.Notify); err != nil {
			return err
		}
		at = tx.Now
		return nil
	})
	if err != nil {
		return err
	}
	r.UpdatedAt, r.CompletedAt = at, &at
	return nil
}

// ListRuns returns one page of the runs f selects, newest first (the order
// of insertion breaks ties between runs created at the same instant), and
// how many f selects in all, read in one snapshot. The index runs_kind
// serves a kind's runs in order.
func (s *Store) ListRuns(ctx context.Context, f completion.RunFilter) ([]*completion.Run, int, error) {
	where, args := s.runWhere(f)
	return listPage(ctx, s, listQuery{cols: runCols, from: `runs r`, where: where, args: args,
		order: `r.created_at DESC, ` + s.d.runSeq() + ` DESC`, limit: f.Limit, offset: f.Offset}, func(r Rows) (*completion.Run, error) { return scanRun(r) })
}

// runWhere returns the condition on runs r, with its arguments, of the
// runs f selects (ignoring its page bounds).
func (s *Store) runWhere(f completion.RunFilter) (string, []any) {
	where := `r.workspace_id = ? AND r.kind = ?`
	args := []any{f.WorkspaceID, f.Kind}
	for _, c := range []struct{ col, v string }{{"r.canvas_id", f.CanvasID}, {"r.version_id", f.VersionID}, {"r.status", f.Status}} {
		if c.v != "" {
			where += ` AND ` + c.col + ` = ?`
			args = append(args, c.v)
		}
	}
	where += createdWithin(&args, "r.created_at", f.Since, f.Until)
	reach := s.d.reachSQL(&args, `r.canvas_id`, f.Scope)
	noCanvas := `r.canvas_id = ''`
	if f.Actor != "" {
		noCanvas += ` AND r.created_by = ?`
		args = append(args, f.Actor)
	}
	where += ` AND ((r.canvas_id <> '' AND ` + reach + `) OR (` + noCanvas + `))`
	return where, args
}

// qRunTotals sums the runs of a filter (the WHERE clause is appended) by
// canvas and version, and over every group with window functions on the
// groups' sums, so that one query bounded by its LIMIT answers both. A
// completed run without a cost is unpriced. Sums of integers are cast to
// BIGINT, which Postgres would otherwise make numeric.
const qRunTotals = `SELECT r.canvas_id, r.version_id, COUNT(*), CAST(SUM(r.input_tokens) AS BIGINT),
	CAST(SUM(r.output_tokens) AS BIGINT), SUM(r.cost_input), SUM(r.cost_output), SUM(r.cost_total),
	CAST(SUM(` + unpriced + `) AS BIGINT),
	COUNT(*) OVER (), CAST(SUM(COUNT(*)) OVER () AS BIGINT), CAST(SUM(SUM(r.input_tokens)) OVER () AS BIGINT),
	CAST(SUM(SUM(r.output_tokens)) OVER () AS BIGINT), SUM(SUM(r.cost_input)) OVER (),
	SUM(SUM(r.cost_output)) OVER (), SUM(SUM(r.cost_total)) OVER (), CAST(SUM(SUM(` + unpriced + `)) OVER () AS BIGINT)
	FROM runs r WHERE `

// unpriced is 1 for a run of runs r that completed without a cost.
const unpriced = `CASE WHEN r.status = '` + completion.StatusCompleted + `' AND r.cost_total IS NULL THEN 1 ELSE 0 END`

// RunTotals sums the runs f selects, in all and by canvas and version, in
// one query: at most maxGroups groups, the most runs first.
func (s *Store) RunTotals(ctx context.Context, f completion.RunFilter, maxGroups int) (*completion.Totals, error) {
	where, args := s.runWhere(f)
	q := qRunTotals + where + ` GROUP BY r.canvas_id, r.version_id
		ORDER BY COUNT(*) DESC, r.canvas_id, r.version_id LIMIT ?`
	t := &completion.Totals{}
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		rows, err := tx.Query(ctx, q, append(args, maxGroups)...)
		t.Groups, err = RowsOf(rows, err, func(r Rows) (completion.GroupSum, error) {
			var g completion.GroupSum
			var cost, all [3]*float64
			err := r.Scan(&g.CanvasID, &g.VersionID, &g.Count, &g.InputTokens, &g.OutputTokens, &cost[0], &cost[1],
				&cost[2], &g.Unpriced, &t.GroupCount, &t.Count, &t.InputTokens, &t.OutputTokens, &all[0], &all[1],
				&all[2], &t.Unpriced)
			g.Cost, t.Cost = sumCost(cost), sumCost(all)
			return g, err
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// sumCost is the cost of sums of the cost columns (input, output, total),
// nil when no run had a cost. Sums are rounded to a billionth of a dollar,
// as each cost is.
func sumCost(c [3]*float64) *model.Cost {
	if c[2] == nil {
		return nil
	}
	round := func(f float64) float64 { return math.Round(f*1e9) / 1e9 }
	return &model.Cost{Input: round(deref(c[0])), Output: round(deref(c[1])), Total: round(*c[2]), Currency: model.Currency}
}
